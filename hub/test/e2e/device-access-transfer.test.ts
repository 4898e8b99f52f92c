/**
 * Files through the hub tunnel while `devicelab connect` answers adb writes early (cli/src/adb-early-ack.ts)
 * and the gateway's bridge takes them pipelined: the real adb client pushes and pulls a file whose checksum must
 * come back unchanged, a push the device refuses still fails, and a release during a push fails that push and
 * drops the connection within 1 s.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EARLY_ACK_WINDOW } from '../../../cli/src/adb-early-ack';
import { Output } from '../../../cli/src/output';
import { openTunnel, tunnelUrl, type Tunnel } from '../../../cli/src/tunnel';
import { startAdbClient, type AdbClient } from '../support/adb-client';
import { startTestLab, waitFor, type TestLab } from '../support/lab';

jest.setTimeout(180_000);

let lab: TestLab;
let alice: { login: string; token: string; adb: AdbClient };
let tunnel: Tunnel;
let scratch: string;
let serial: string;

async function json(res: Response): Promise<any> {
  return res.json();
}

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

async function online(address: string): Promise<boolean> {
  const { stdout } = await alice.adb.adb(['devices']);
  return stdout.split('\n').some((line) => line.startsWith(address) && /\tdevice\s*$/.test(line));
}

function randomFile(name: string, megabytes: number): string {
  const file = path.join(scratch, name);
  writeFileSync(file, randomBytes(megabytes * 1024 * 1024 + 12_345)); // not a whole number of packets
  return file;
}

beforeAll(async () => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'devicelab-transfer-'));
  lab = await startTestLab({ androidCount: 1 });
  serial = lab.devices[0].serial;
  const credentials = await lab.addUser('alice@lab.test', ['Tester']);
  const [self] = await json(await lab.api(credentials, '/User'));
  alice = { ...credentials, adb: await startAdbClient('alice') };
  const added = await json(await lab.api(alice, `/User?action=addAdbKey&id=${self.id}`, {
    method: 'POST', body: new URLSearchParams({ key: alice.adb.publicKey }),
  }));
  expect(added.isSuccess).toBe(true);
  expect((await json(await lab.api(alice, `/Device?action=retain&id=${serial}`, { method: 'POST' }))).isSuccess).toBe(true);
  tunnel = await openTunnel({
    url: tunnelUrl(`${lab.hub.url}/apiv1`, serial),
    authorization: `Basic ${Buffer.from(`${alice.login}:${alice.token}`).toString('base64')}`,
  }, new Output(false, { tty: false, colour: false }), { earlyAcks: EARLY_ACK_WINDOW });
  await alice.adb.adb(['connect', tunnel.address]);
  await waitFor(() => online(tunnel.address), 15_000, 'alice sees the device through the tunnel');
});

afterAll(async () => {
  await tunnel?.close();
  await alice?.adb.stop();
  await lab?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

test('a pushed file comes back unchanged through the tunnel (push, then pull)', async () => {
  const file = randomFile('payload.bin', 12);
  const pushed = await alice.adb.adb(['-s', tunnel.address, 'push', file, '/data/local/tmp/payload.bin'], 120_000);
  expect(pushed).toMatchObject({ ok: true });
  expect(pushed.stdout).toMatch(/1 file pushed/);
  const back = path.join(scratch, 'back.bin');
  const pulled = await alice.adb.adb(['-s', tunnel.address, 'pull', '/data/local/tmp/payload.bin', back], 120_000);
  expect(pulled).toMatchObject({ ok: true });
  expect(sha256(back)).toBe(sha256(file));
});

test('a push the device fails still fails, though its writes were acknowledged early', async () => {
  // The destination's directory is a dangling link: adb's stat finds nothing there and sends the whole file; the
  // device answers FAIL when it cannot create the file, after 5 MiB (more than the early window) went in.
  symlinkSync('/nonexistent-devicelab-target', lab.world.device(serial).hostPath('/data/local/tmp/dangling'));
  const file = randomFile('refused.bin', 5);
  const refused = await alice.adb.adb(['-s', tunnel.address, 'push', file, '/data/local/tmp/dangling/inside.bin'], 60_000);
  expect(refused.ok).toBe(false);
  expect(`${refused.stdout}${refused.stderr}`).toMatch(/couldn't create file/);
  // The connection is still good for the next command.
  const serialno = await alice.adb.adb(['-s', tunnel.address, 'shell', 'getprop', 'ro.serialno']);
  expect(serialno.stdout.trim()).toBe(serial);
});

test('a release during a push fails the push and drops the connection within 1 s', async () => {
  const file = randomFile('large.bin', 96);
  const started = Date.now();
  const push = alice.adb.adb(['-s', tunnel.address, 'push', file, '/data/local/tmp/large.bin'], 120_000);
  let finished = false;
  void push.then(() => { finished = true; });
  await new Promise((resolve) => setTimeout(resolve, 400));
  expect(finished).toBe(false); // still pushing: what follows cuts it mid-way
  const released = await json(await lab.api(alice, `/Device?action=release&id=${serial}`, { method: 'POST' }));
  expect(released.isSuccess).toBe(true);
  await waitFor(async () => !(await online(tunnel.address)), 1_000, 'the tunnelled connection dropped within 1 s');
  const result = await push;
  expect(result.ok).toBe(false);
  expect(Date.now() - started).toBeLessThan(60_000);
});
