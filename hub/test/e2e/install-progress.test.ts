/**
 * Determinate install progress, end to end: the gateway streams the APK into the simulated device and reports the
 * share of bytes sent over the link; the hub keeps it on the async job, answers it on `/Async` while the install
 * runs and pushes it on the event stream. What a script sees: a rising percent that ends at 100.
 */
import { readFile } from 'node:fs/promises';
import { fixture } from '../../../scripts/jest/shared-files';
import { startTestLab, waitFor, type TestLab } from '../support/lab';

let lab: TestLab;
let appId: string;

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1 });
  const form = new FormData();
  form.append('upload', new Blob([await readFile(fixture('ApiDemos-debug.apk'))]), 'ApiDemos-debug.apk');
  const uploaded = await (await lab.api(lab.admin, '/Application?add&wait=true', { method: 'POST', body: form })).json() as { data: { id: string } };
  appId = uploaded.data.id;
  expect(appId).toBeDefined();
}, 90_000);
afterAll(() => lab?.stop(), 60_000);

const basic = (c: { login: string; token: string }) => ({ authorization: `Basic ${Buffer.from(`${c.login}:${c.token}`).toString('base64')}` });

interface JobObject { id: string; status: string; progress?: number; result?: { isSuccess: boolean } }

/** Opens the event stream; `connected` resolves once the hub wrote its first block (the subscription is live). */
function jobEvents(jobOf: () => string | undefined) {
  const controller = new AbortController();
  const seen: JobObject[] = [];
  let connectedResolve!: () => void;
  const connected = new Promise<void>((resolve) => { connectedResolve = resolve; });
  const finished = (async () => {
    const res = await fetch(`${lab.hub.url}/apiv1/Events`, { headers: basic(lab.admin), signal: controller.signal });
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        connectedResolve();
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (!block.includes('event: job')) continue;
          const data = JSON.parse(block.split('\n').find((l) => l.startsWith('data: '))!.slice(6)) as { object: JobObject };
          if (data.object?.id === jobOf()) seen.push(data.object);
        }
        if (seen.some((job) => job.status !== 'running')) break;
      }
    } catch (err) {
      if ((err as Error).name !== 'AbortError') throw err;
    }
    return seen;
  })();
  return { connected, finished, stop: () => controller.abort() };
}

it('an install reports rising progress on the event stream and on /Async, ending at 100 when it succeeded', async () => {
  const serial = lab.devices[0].serial;
  // The device's package manager takes its time once every byte is in: the job is seen running with its progress.
  await lab.world.setInstallDelay(serial, 3000);
  let jobId: string | undefined;
  const stream = jobEvents(() => jobId);
  try {
    await stream.connected;
    const reply = await (await lab.api(lab.admin, `/Application?action=install&id=${appId}&deviceId=${serial}`, { method: 'POST' })).json() as
      { data: { asyncResponseId: string } };
    jobId = reply.data.asyncResponseId;

    // /Async while running: the percent, an integer below 100.
    const { value: running } = await waitFor(async () => {
      const status = await (await lab.api(lab.admin, `/Async?id=${jobId}`)).json() as { isComplete: boolean; progress?: number };
      return status.progress !== undefined && !status.isComplete && status;
    }, 30_000, 'a running install with progress on /Async');
    expect(Number.isInteger(running.progress)).toBe(true);
    expect(running.progress).toBeGreaterThanOrEqual(0);
    expect(running.progress).toBeLessThan(100);

    const events = await stream.finished;
    const percents = events.map((job) => job.progress).filter((p): p is number => p !== undefined);
    // Each event carries the job as it is when sent: the same value may come twice, never a lower one.
    expect(percents).toEqual([...percents].sort((a, b) => a - b));
    expect(percents.some((p) => p > 0 && p < 100)).toBe(true);
    const last = events[events.length - 1];
    expect(last).toMatchObject({ status: 'complete', progress: 100, result: { isSuccess: true } });
  } finally {
    stream.stop();
    await lab.world.setInstallDelay(serial, 0);
  }
  const done = await (await lab.api(lab.admin, `/Async?id=${jobId}`)).json();
  expect(done).toEqual({ isComplete: true, data: { isSuccess: true } });
}, 90_000);
