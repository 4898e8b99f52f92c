/**
 * Async operations (spec 4.7, wire rule 14 of docs/wire-rules.md) as rows in `async_jobs`, so `/Async` survives a hub
 * restart and could be answered by another replica. Status: running → complete → delivered (returned once, then
 * invalid). An id not polled for 5 minutes is invalid. Every job ends within its deadline: one that takes longer
 * completes with a failure Result saying it timed out (its work is abandoned, its outcome no longer reported). Work
 * that can tell how far it is (an install) reports a percent, kept on the row for `/Async` and the event stream.
 */
import { sql } from 'kysely';
import { ApiFailure, createLogger, failure, UNEXPECTED_ERROR_MESSAGE, type Logger } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { asyncJobDuration } from '../observability/hub-metrics';
import type { Db } from '../store/database';
import type { JobIntent } from '../store/schema';
import { LockKind, lockHeldSql } from '../fleet/advisory-locks';
import { thisReplica } from '../fleet/replica';

/** A job whose replica is not live (dead, or a hub from before replicas): nobody will finish it. */
export const runByDeadReplica = sql<boolean>`NOT ${lockHeldSql(LockKind.replica, sql`coalesce(replica_id, '')`)}`;

const ASYNC_JOB_TTL_MS = 5 * 60_000;
export const INVALID_ASYNC_ID = 'The async operation id is unknown, expired or already completed.';

/** Longer than the longest device command (an install: 10 minutes), so a command's own timeout speaks first. */
export const DEFAULT_ASYNC_JOB_TIMEOUT_MS = 15 * 60_000;

export type Clock = () => Date;
interface AsyncJobOptions {
  clock?: Clock;
  logger?: Logger;
  /** What the job does to a device: a restart reconciles the job with the device instead of failing it. */
  intent?: JobIntent;
  /** Deadline of the work (default DEFAULT_ASYNC_JOB_TIMEOUT_MS). */
  timeoutMs?: number;
}

/** Tells the job how far its work is, in percent (0..99); lower or repeated values are ignored. */
export type ReportProgress = (percent: number) => void;
export const ignoreProgress: ReportProgress = () => undefined;

/** The work of a job; it may report its progress. */
export type JobWork = (progress: ReportProgress) => Promise<unknown>;

interface StartedJob {
  id: string;
  /** Settles (never rejects) once the result is stored. */
  done: Promise<unknown>;
}

export const timedOut = (timeoutMs: number): string =>
  `The operation timed out: it did not complete within ${timeoutMs / 1000} s.`;

/**
 * Runs `work` within the deadline: its result, or an ApiFailure saying it timed out (the work is abandoned, its
 * outcome no longer reported). Errors of the work pass through unchanged.
 */
export async function withDeadline<T>(work: () => Promise<T>, timeoutMs = DEFAULT_ASYNC_JOB_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new ApiFailure(timedOut(timeoutMs))), timeoutMs);
    timer.unref(); // the deadline alone keeps no process alive
  });
  try {
    return await Promise.race([work(), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs `work` to its outcome as a wire value: its result, or a failure Result for a thrown ApiFailure or a passed
 * deadline. Any other error is a bug: logged with its stack and answered with the same text as an HTTP 500.
 */
async function settle(work: () => Promise<unknown>, logger: Logger, timeoutMs?: number): Promise<unknown> {
  try {
    return await withDeadline(work, timeoutMs);
  } catch (err) {
    if (err instanceof ApiFailure) return failure(err.message, err.code, err.parameter);
    logger.error({ err }, 'async operation failed unexpectedly');
    return failure(UNEXPECTED_ERROR_MESSAGE);
  }
}

export async function startAsyncJob(
  db: Db, owner: AuthenticatedUser, kind: string, work: JobWork, options: AsyncJobOptions = {},
): Promise<StartedJob> {
  const clock = options.clock ?? (() => new Date());
  const { id } = await db.insertInto('async_jobs')
    .values({ kind, owner_id: owner.id, replica_id: thisReplica.id, last_polled_at: clock(), intent: options.intent ? JSON.stringify(options.intent) : null })
    .returning('id').executeTakeFirstOrThrow();
  const logger = options.logger ?? createLogger('hub.async');
  const endTimer = asyncJobDuration.startTimer({ kind });
  const progress = progressRecorder(db, id, logger);
  const done = settle(() => work(progress.report), logger, options.timeoutMs).then(async (result) => {
    endTimer();
    // Work that reported progress ends at 100 when it succeeded; a failure keeps where it stopped.
    const succeeded = !(result && typeof result === 'object' && (result as { isSuccess?: unknown }).isSuccess === false);
    try {
      await progress.settled();
      await db.updateTable('async_jobs')
        .set({ status: 'complete', result: JSON.stringify(result ?? null), completed_at: clock(),
          ...(progress.reported() && succeeded ? { progress: 100 } : {}) })
        .where('id', '=', id).where('status', '=', 'running').execute();
    } catch (err) {
      logger.error({ err, id }, 'could not store the result of an async operation');
    }
    return result;
  });
  return { id, done };
}

/**
 * Stores a running job's progress: one write at a time, each with the latest percent (values reported meanwhile
 * are skipped), never lowering the stored value and never touching a job that is no longer running.
 */
function progressRecorder(db: Db, id: string, logger: Logger) {
  let latest = -1;
  let stored = -1;
  let writing: Promise<void> | undefined;
  const write = async () => {
    while (latest > stored) {
      const value = latest;
      try {
        await db.updateTable('async_jobs').set({ progress: value })
          .where('id', '=', id).where('status', '=', 'running')
          .where((eb) => eb.or([eb('progress', 'is', null), eb('progress', '<', value)]))
          .execute();
      } catch (err) {
        logger.warn({ err, id }, 'could not store the progress of an async operation');
      }
      stored = value;
    }
    writing = undefined;
  };
  return {
    report(percent: number): void {
      if (!Number.isFinite(percent)) return;
      const value = Math.min(99, Math.max(0, Math.floor(percent)));
      if (value <= latest) return;
      latest = value;
      writing ??= write();
    },
    reported: () => latest >= 0,
    /** Resolves once no progress write is in flight (so the completion is the row's last change). */
    settled: async () => { await writing; },
  };
}

/** The 5-minute clock restarts with every poll and when the result becomes available. */
const lastActivity = sql<Date>`greatest(last_polled_at, coalesce(completed_at, last_polled_at))`;

type AsyncPoll = { isComplete: false; progress?: number } | { isComplete: true; data: unknown };

/**
 * `{isComplete:false}` while running (with `progress`, an extension, once the work reported one);
 * `{isComplete:true,data}` exactly once; afterwards, for another user's id, an
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
    .returning('progress').executeTakeFirst();
  if (running) return running.progress === null ? { isComplete: false } : { isComplete: false, progress: running.progress };
  throw new ApiFailure(INVALID_ASYNC_ID);
}

/**
 * At hub start, and on the lab's leader while replicas run: jobs left running by a process that is gone can never
 * finish; complete them with a failure so their pollers get an answer (jobs of live replicas are left alone). Jobs with an intent are reconciled with the device instead (interrupted-jobs.ts).
 */
export async function failInterruptedJobs(db: Db, now: Date = new Date()): Promise<number> {
  const rows = await db.updateTable('async_jobs')
    .set({ status: 'complete', completed_at: now,
      result: JSON.stringify(failure('The hub restarted before the operation completed.')) })
    .where('status', '=', 'running').where('intent', 'is', null).where(runByDeadReplica).returning('id').execute();
  return rows.length;
}
