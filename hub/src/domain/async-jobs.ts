/**
 * Async operations (spec 4.7, wire-decisions rule 14) as rows in `async_jobs`, so `/Async` survives a hub restart
 * and could be answered by another replica. Status: running → complete → delivered (returned once, then invalid).
 * An id not polled for 5 minutes is invalid. Every job ends within its deadline: one that takes longer completes
 * with a failure Result saying it timed out (its work is abandoned, its outcome no longer reported).
 */
import { sql } from 'kysely';
import { ApiFailure, failure, type Logger } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import type { Db } from '../store/database';

export const ASYNC_JOB_TTL_MS = 5 * 60_000;
export const INVALID_ASYNC_ID = 'The async operation id is unknown, expired or already completed.';

/** Longer than the longest device command (an install: 10 minutes), so a command's own timeout speaks first. */
export const DEFAULT_ASYNC_JOB_TIMEOUT_MS = 15 * 60_000;

export type Clock = () => Date;
export interface AsyncJobOptions {
  clock?: Clock;
  logger?: Logger;
  /** Deadline of the work (default DEFAULT_ASYNC_JOB_TIMEOUT_MS). */
  timeoutMs?: number;
}

export interface StartedJob {
  id: string;
  /** Settles (never rejects) once the result is stored. */
  done: Promise<unknown>;
}

export const timedOut = (timeoutMs: number): string =>
  `The operation timed out: it did not complete within ${timeoutMs / 1000} s.`;

/**
 * Runs `work` to its outcome as a wire value: its result (`ok`), or a failure Result for a thrown ApiFailure or when
 * the deadline passes first (other errors are logged and reported with a generic text).
 */
export async function settle(
  work: () => Promise<unknown>, options: { logger?: Logger; timeoutMs?: number } = {},
): Promise<{ ok: boolean; value: unknown }> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_ASYNC_JOB_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new ApiFailure(timedOut(timeoutMs))), timeoutMs);
    timer.unref(); // the deadline alone keeps no process alive
  });
  try {
    return { ok: true, value: await Promise.race([work(), deadline]) };
  } catch (err) {
    if (err instanceof ApiFailure) return { ok: false, value: failure(err.message) };
    options.logger?.error({ err }, 'async operation failed unexpectedly');
    return { ok: false, value: failure(`The operation failed: ${(err as Error)?.message ?? String(err)}`) };
  } finally {
    clearTimeout(timer);
  }
}

export async function startAsyncJob(
  db: Db, owner: AuthenticatedUser, kind: string, work: () => Promise<unknown>, options: AsyncJobOptions = {},
): Promise<StartedJob> {
  const clock = options.clock ?? (() => new Date());
  const { id } = await db.insertInto('async_jobs')
    .values({ kind, owner_id: owner.id, last_polled_at: clock() })
    .returning('id').executeTakeFirstOrThrow();
  const done = settle(work, options).then(async ({ value: result }) => {
    try {
      await db.updateTable('async_jobs')
        .set({ status: 'complete', result: JSON.stringify(result ?? null), completed_at: clock() })
        .where('id', '=', id).where('status', '=', 'running').execute();
    } catch (err) {
      options.logger?.error({ err, id }, 'could not store the result of an async operation');
    }
    return result;
  });
  return { id, done };
}

/** The 5-minute clock restarts with every poll and when the result becomes available. */
const lastActivity = sql<Date>`greatest(last_polled_at, coalesce(completed_at, last_polled_at))`;

export type AsyncPoll = { isComplete: false } | { isComplete: true; data: unknown };

/**
 * `{isComplete:false}` while running; `{isComplete:true,data}` exactly once; afterwards, for another user's id, an
 * unknown id or one unpolled for 5 minutes: ApiFailure.
 */
export async function pollAsyncJob(
  db: Db, user: AuthenticatedUser, id: string, options: AsyncJobOptions = {},
): Promise<AsyncPoll> {
  const now = (options.clock ?? (() => new Date()))();
  const expiredBefore = new Date(now.getTime() - ASYNC_JOB_TTL_MS);
  await db.deleteFrom('async_jobs')
    .where((eb) => eb.or([eb('status', '=', 'delivered'), eb(lastActivity, '<', expiredBefore)]))
    .execute();
  // Claim a completed result atomically, so two concurrent polls cannot both receive it.
  const delivered = await db.updateTable('async_jobs')
    .set({ status: 'delivered', last_polled_at: now })
    .where('id', '=', id).where('owner_id', '=', user.id).where('status', '=', 'complete')
    .where(lastActivity, '>=', expiredBefore)
    .returning('result').executeTakeFirst();
  if (delivered) return { isComplete: true, data: delivered.result };
  const running = await db.updateTable('async_jobs')
    .set({ last_polled_at: now })
    .where('id', '=', id).where('owner_id', '=', user.id).where('status', '=', 'running')
    .where(lastActivity, '>=', expiredBefore)
    .returning('id').executeTakeFirst();
  if (running) return { isComplete: false };
  throw new ApiFailure(INVALID_ASYNC_ID);
}

/**
 * At hub start: jobs left running by a previous process can never finish; complete them with a failure so their
 * pollers get an answer.
 */
export async function failInterruptedJobs(db: Db, now: Date = new Date()): Promise<number> {
  const rows = await db.updateTable('async_jobs')
    .set({ status: 'complete', completed_at: now,
      result: JSON.stringify(failure('The hub restarted before the operation completed.')) })
    .where('status', '=', 'running').returning('id').execute();
  return rows.length;
}
