/**
 * Async jobs a hub restart interrupted. The gateway may well have finished the work, so a job that
 * says what it did to a device (its intent) is not failed at start: it is reconciled with the device's real state
 * as the records show it once the device's gateway has reported it again (every device is Offline at hub start
 * until then). Installed: success. Not installed once the install command's deadline has passed (until then the
 * gateway may still be installing): a failure that says the hub restarted.
 */
import { ApiFailure, failure, success } from '@devicelab/shared';
import type { Db } from '../store/database';
import type { JobIntent } from '../store/schema';
import { runByDeadReplica } from './async-jobs';
import { matchManagedApplication } from './application-mapping';
import { resolveDevice } from './device-queries';

/**
 * At hub start (and on the leader), before jobs without an intent are failed: hold the reconcilable ones of replicas
 * that are gone for reconciliation.
 */
export async function holdInterruptedJobs(db: Db, now: Date = new Date()): Promise<void> {
  await db.updateTable('async_jobs').set((eb) => ({ interrupted_at: eb.fn.coalesce('interrupted_at', eb.val(now)) }))
    .where('status', '=', 'running').where('intent', 'is not', null).where('interrupted_at', 'is', null)
    .where(runByDeadReplica).execute();
}

/** Completes the interrupted job `id` when the device's state decides it; does nothing for any other job. */
export async function reconcileInterruptedJob(db: Db, id: string, now: Date = new Date()): Promise<void> {
  const job = await db.selectFrom('async_jobs').select('intent')
    .where('id', '=', id).where('status', '=', 'running').where('interrupted_at', 'is not', null).executeTakeFirst();
  if (!job?.intent) return;
  const outcome = await installOutcome(db, job.intent, now);
  if (outcome === undefined) return;
  await db.updateTable('async_jobs')
    .set({ status: 'complete', result: JSON.stringify(outcome), completed_at: now })
    .where('id', '=', id).where('status', '=', 'running').execute();
}

async function installOutcome(db: Db, intent: JobIntent, now: Date): Promise<unknown> {
  const app = await db.selectFrom('applications').selectAll().where('id', '=', intent.applicationId).executeTakeFirst();
  const device = await resolveDevice(db, intent.deviceIdentifier).catch((err: unknown) => {
    if (err instanceof ApiFailure) return undefined; // deleted since
    throw err;
  });
  if (!app || !device) return failure('The hub restarted before the install completed, and the application or the device is gone since.');
  const reported = device.availability === 'Online';
  if (reported && device.installed_packages.some((pkg) => matchManagedApplication(pkg, device.operating_system, [app]))) return success();
  if (now.getTime() < Date.parse(intent.deadline)) return undefined;
  return failure(reported
    ? `The hub restarted while installing '${app.display_name}' on device '${device.name}', and the device does not have it. Install it again.`
    : `The hub restarted while installing '${app.display_name}' on device '${device.name}', and the device has not been reported since. Check the device, then install again.`);
}
