/**
 * The reply of an async POST (wire rule 14, docs/wire-rules.md): `{"isSuccess":true,"data":{"asyncResponseId":…}}`,
 * or with `wait=true` the outcome itself once the work is done; either way within the job deadline (async-jobs.ts).
 */
import { successWith } from '@devicelab/shared';
import { ignoreProgress, startAsyncJob, withDeadline, type JobWork } from '../domain/async-jobs';
import type { RequestContext } from '../http/handler';
import type { JobIntent } from '../store/schema';
import type { ApiDependencies } from './context';

export async function asyncReply(
  ctx: RequestContext,
  deps: ApiDependencies,
  kind: string,
  /** Produces the value stored for /Async (a Result, or the Application of an upload); may report progress. */
  work: JobWork,
  options: {
    /** Turns that value into the `wait=true` reply (default: the value itself). */
    waitReply?: (value: unknown) => unknown;
    /** What the work does to a device, so that a hub restart reconciles the job instead of failing it. */
    intent?: JobIntent;
  } = {},
): Promise<unknown> {
  // A plain request then: its errors take the same way as every other request's (handler.ts).
  if (ctx.params.wait()) {
    const value = await withDeadline(() => work(ignoreProgress), deps.asyncJobTimeoutMs);
    return options.waitReply ? options.waitReply(value) : value;
  }
  const job = await startAsyncJob(deps.db, ctx.user, kind, work,
    { clock: deps.clock, logger: deps.logger, intent: options.intent, timeoutMs: deps.asyncJobTimeoutMs });
  return successWith({ asyncResponseId: job.id });
}
