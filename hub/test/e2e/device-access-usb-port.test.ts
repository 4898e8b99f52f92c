/**
 * Switching a retained device's USB port Off drops the open adb connections of its endpoint (the
 * device left the gateway's host); the retain stays, and with the port back on the retainer connects again.
 */
import { startAdbClient, type AdbClient } from '../support/adb-client';
import { startTestLab, waitFor, type TestLab } from '../support/lab';

jest.setTimeout(180_000);

let lab: TestLab;
let alice: { login: string; token: string; id: string; adb: AdbClient };

async function json(res: Response): Promise<any> {
  return res.json();
}

async function online(client: AdbClient, address: string): Promise<boolean> {
  const { stdout } = await client.adb(['devices']);
  return stdout.split('\n').some((line) => line.startsWith(address) && /\tdevice\s*$/.test(line));
}

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1, usbHub: {} });
  const credentials = await lab.addUser('alice@lab.test', ['Tester']);
  const [self] = await json(await lab.api(credentials, '/User'));
  alice = { ...credentials, id: self.id, adb: await startAdbClient('alice') };
});

afterAll(async () => {
  await alice?.adb.stop();
  await lab?.stop();
});

test('USB port Off drops the open adb connection; Data lets the retainer in again', async () => {
  const serial = lab.devices[0].serial;
  const added = await json(await lab.api(alice, `/User?action=addAdbKey&id=${alice.id}`, {
    method: 'POST', body: new URLSearchParams({ key: alice.adb.publicKey }),
  }));
  expect(added.isSuccess).toBe(true);
  const retained = await json(await lab.api(alice, `/Device?action=retain&id=${serial}`, { method: 'POST' }));
  expect(retained.isSuccess).toBe(true);
  const address = `${retained.data.gatewayAddress}:${retained.data.gatewayPort}`;
  await alice.adb.adb(['connect', address]);
  await waitFor(() => online(alice.adb, address), 15_000, 'alice sees the device');
  expect((await alice.adb.adb(['-s', address, 'shell', 'echo', 'before-off'])).stdout).toContain('before-off');

  const [device] = await json(await lab.api(alice, `/Device?anyId=${serial}`));
  const off = await json(await lab.api(lab.admin, `/Device/UsbPort?update&id=${device.id}&usbHubPortState=Off`, { method: 'POST' }));
  expect(off).toEqual({ isSuccess: true });
  await waitFor(async () => !(await online(alice.adb, address)), 5_000, 'the connection dropped with the port Off');
  const shell = await alice.adb.adb(['-s', address, 'shell', 'echo', 'while-off'], 5_000);
  expect(shell.stdout).not.toContain('while-off');

  const [still] = await json(await lab.api(alice, `/Device?anyId=${serial}`));
  expect(still.retainedByUserName).toBe(alice.login);
  const on = await json(await lab.api(lab.admin, `/Device/UsbPort?update&id=${device.id}&usbHubPortState=Data`, { method: 'POST' }));
  expect(on).toEqual({ isSuccess: true });
  await waitFor(async () => {
    await alice.adb.adb(['connect', address], 5_000);
    return online(alice.adb, address);
  }, 30_000, 'alice reaches the device again with the port on');
  expect((await alice.adb.adb(['-s', address, 'shell', 'echo', 'after-on'])).stdout).toContain('after-on');
});
