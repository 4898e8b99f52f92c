/**
 * An async install a hub restart interrupts: the gateway goes on with it, and the restarted hub
 * answers the job from the device's real state instead of failing it blindly.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fixture } from '../../../scripts/jest/shared-files';
import { startAsyncJob } from '../../src/domain/async-jobs';
import { holdInterruptedJobs } from '../../src/domain/interrupted-jobs';
import { startTestLab, waitFor, type TestLab } from '../support/lab';

interface WireDevice { id: string; serialNumber?: string; installedApplications?: { applicationIdentifier: string }[] }
interface UploadedApp { id: string; applicationIdentifier: string; sha256?: string }

let lab: TestLab;
let device: WireDevice;
let app: UploadedApp;

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1 });
  const devices = await (await lab.api(lab.admin, '/Device')).json() as WireDevice[];
  device = devices.find((d) => d.serialNumber === lab.devices[0].serial)!;
  const form = new FormData();
  form.append('upload', new Blob([readFileSync(fixture('ContactManager.apk'))]), 'ContactManager.apk');
  const upload = await (await lab.api(lab.admin, '/Application?add&wait=true', { method: 'POST', body: form })).json() as
    { data: UploadedApp };
  app = upload.data;
}, 90_000);

afterAll(() => lab?.stop(), 60_000);

async function pollUntilComplete(id: string): Promise<unknown> {
  const { value } = await waitFor(async () => {
    const body = await (await lab.api(lab.admin, `/Async?id=${id}`)).json() as { isComplete?: boolean; data?: unknown };
    return body.isComplete ? body : undefined;
  }, 30_000, `async job ${id}`);
  return value.data;
}

test('an install the gateway finishes while the hub restarts completes as a success after the restart', async () => {
  await lab.world.setInstallDelay(lab.devices[0].serial, 3_000);
  try {
    const started = await (await lab.api(lab.admin, `/Application?action=install&id=${app.id}&deviceId=${device.id}`,
      { method: 'POST' })).json() as { data: { asyncResponseId: string } };
    // The gateway has the binary: the device is installing it now.
    const { blob_sha256: sha256 } = await lab.hub.db.selectFrom('applications').select('blob_sha256')
      .where('id', '=', app.id).executeTakeFirstOrThrow();
    await waitFor(async () => existsSync(path.join(lab.dataDir, 'gateway-cache', `${sha256}.apk`)), 20_000, 'the gateway to fetch the app');

    await lab.restartHub();

    expect(await pollUntilComplete(started.data.asyncResponseId)).toEqual({ isSuccess: true });
    const [read] = await (await lab.api(lab.admin, `/Device?id=${device.id}&applications=true`)).json() as WireDevice[];
    expect(read.installedApplications?.map((a) => a.applicationIdentifier)).toContain(app.applicationIdentifier);
  } finally {
    await lab.world.setInstallDelay(lab.devices[0].serial, 0);
  }
}, 120_000);

test('an interrupted install the device does not have fails, saying the hub restarted', async () => {
  expect(await (await lab.api(lab.admin, `/Application?action=uninstall&id=${app.id}&deviceId=${device.id}`, { method: 'POST' })).json())
    .toEqual({ isSuccess: true });
  const { id: adminId } = await lab.hub.db.selectFrom('users').select('id').where('login', '=', 'admin').executeTakeFirstOrThrow();
  // A job a previous hub process left running, whose install command's deadline has passed.
  const owner = { id: adminId, login: 'admin', displayName: 'admin', entitlements: new Set<never>(), roles: [] };
  const job = await startAsyncJob(lab.hub.db, owner, 'install', () => new Promise(() => undefined),
    { intent: { action: 'install', applicationId: app.id, deviceIdentifier: device.id, deadline: new Date(Date.now() - 1).toISOString() } });
  // Its replica is gone (this process's live hub would otherwise own it: jobs of live replicas are left alone).
  await lab.hub.db.updateTable('async_jobs').set({ replica_id: 'a-replica-that-is-gone' }).where('id', '=', job.id).execute();
  await holdInterruptedJobs(lab.hub.db);

  expect(await pollUntilComplete(job.id)).toEqual({
    isSuccess: false,
    errorMessage: expect.stringMatching(/^The hub restarted while installing .* and the device does not have it\. Install it again\.$/),
  });
}, 60_000);
