/**
 * The live screen of a simulated iPhone through the hub: lockdown's screenshotr polled by the gateway, view only
 * (no WebDriverAgent), said in the start message; the same PNG as a still from `/Device/Screenshot`.
 */
import { basic, openScreen, screenUrl } from '../support/screen-client';
import { startTestLab, waitFor, type TestLab } from '../support/lab';

jest.setTimeout(180_000);

let lab: TestLab;
let deviceId: string;

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 0, iosCount: 1 });
  const udid = lab.iosDevices[0].udid;
  const device = await waitFor(async () => ((await (await lab.api(lab.admin, '/Device')).json()) as { id: string; vendorUniqueIdentifier?: string; serialNumber?: string; readiness?: string }[])
    .find((d) => (d.vendorUniqueIdentifier === udid || d.serialNumber === lab.iosDevices[0].serialNumber) && d.readiness === 'Ready'), 60_000, 'the iPhone Ready');
  deviceId = device.value.id;
});
afterAll(async () => {
  await lab?.stop();
});

test('an iPhone is shown view only from screenshotr, and its still is a PNG', async () => {
  const retained = await (await lab.api(lab.admin, `/Device?action=retain&id=${deviceId}`, { method: 'POST' })).json() as { isSuccess: boolean };
  expect(retained.isSuccess).toBe(true);
  const client = openScreen(screenUrl(lab.hub.url, `id=${deviceId}`), basic(lab.admin));
  await client.opened;
  await waitFor(async () => client.starts.length > 0 && client.frames > 1, 30_000, 'frames from screenshotr');
  expect(client.starts[0]).toMatchObject({ source: 'screenshotr', viewOnly: false, controls: { touch: false, keys: false, text: false, rotate: false } });
  expect(String(client.starts[0].note)).toMatch(/view only/i);
  expect(client.lastFrame!.subarray(1, 4).toString('latin1')).toBe('PNG');
  const still = await lab.api(lab.admin, `/Device/Screenshot?id=${deviceId}`);
  expect(still.headers.get('content-type')).toBe('image/png');
  expect(Buffer.from(await still.arrayBuffer()).subarray(1, 4).toString('latin1')).toBe('PNG');
  client.ws.terminate();
  await lab.api(lab.admin, `/Device?action=release&id=${deviceId}`, { method: 'POST' });
});
