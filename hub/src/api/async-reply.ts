/**
 * The reply of an async POST (wire-decisions rule 14): `{"isSuccess":true,"data":{"asyncResponseId":…}}`, or with
 * `wait=true` the outcome itself once the work is done; either way within the job deadline (async-jobs.ts).
 */
import { successWith } from '@devicelab/shared';
import { settle, startAsyncJob } from '../domain/async-jobs';
import type { RequestContext } from '../http/handler';
import type { ApiDependencies } from './context';

export async function asyncReply(
  ctx: RequestContext,
  deps: ApiDependencies,
  kind: string,
  /** Produces the value stored for /Async (a Result, or the Application of an upload). */
  work: () => Promise<unknown>,
  /** Turns that value into the `wait=true` reply (default: the value itself). */
  waitReply: (value: unknown) => unknown = (value) => value,
): Promise<unknown> {
  if (ctx.params.wait()) {
    const { ok, value } = await settle(work, { logger: deps.logger, timeoutMs: deps.asyncJobTimeoutMs });
    return ok ? waitReply(value) : value;
  }
  const job = await startAsyncJob(deps.db, ctx.user, kind, work,
    { clock: deps.clock, logger: deps.logger, timeoutMs: deps.asyncJobTimeoutMs });
  return successWith({ asyncResponseId: job.id });
}
