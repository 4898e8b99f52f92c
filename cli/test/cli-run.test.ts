/**
 * `devicelab run` (the built binary) against a real lab: the command sees its devices in its environment, exits
 * with its code, and the devices are released on every way out: success, failure, SIGINT, SIGTERM, --timeout,
 * a command that cannot start, and an install that fails.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../hub/test/support/adb-client';
import { startTestLab, waitFor, type TestLab } from '../../hub/test/support/lab';
import { fixture } from '../../scripts/jest/shared-files';
import { cliEnvironment, deviceState, runCli, startCli, type CliUser } from './support/cli-process';

// Each test starts several CLI processes on a shared, busy machine.
jest.setTimeout(180_000);

let lab: TestLab;
let tester: CliUser;
let scratch: string;
/** The user's own adb: its own HOME (key pair) and its own adb server port, so no other adb server is touched. */
let adbEnv: Record<string, string>;

/** The user's adb, asynchronously: the hub (and its tunnel) runs in this process and must keep serving meanwhile. */
async function adb(...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)('adb', args, { env: { ...process.env, ...adbEnv }, timeout: 30_000 });
  return stdout;
}

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 2 });
  tester = await lab.addUser('runner@example.com', ['Tester']);
  scratch = mkdtempSync(path.join(os.tmpdir(), 'devicelab-cli-run-'));
  mkdirSync(path.join(scratch, '.android'));
  adbEnv = { HOME: scratch, ANDROID_ADB_SERVER_PORT: String(await freePort()) };
}, 120_000);

afterAll(async () => {
  await adb('kill-server').catch(() => undefined); // only this test's own adb server
  await lab?.stop();
}, 60_000);

const env = () => cliEnvironment(lab, tester);

/** A node one-liner for the command `run` starts: says it started, then waits for a signal (reporting it). */
const WAITING_CHILD = "process.on('SIGINT',()=>{console.log('child got SIGINT');process.exit(130)});"
  + "process.on('SIGTERM',()=>{console.log('child got SIGTERM');process.exit(143)});"
  + "console.log('child started');setInterval(()=>{},1000);";

async function expectAllReleased(): Promise<void> {
  for (const spec of lab.devices) expect((await deviceState(lab, spec.serial)).retainedById).toBeUndefined();
}

test('success: the command gets DEVICELAB_DEVICE_IDS and _SERIALS, run exits 0 and releases the devices', async () => {
  const envFile = path.join(scratch, 'env.json');
  const result = await runCli(['run', '--filter', 'os=android', '--count', '2', '--no-adb', '--',
    process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(envFile)}, JSON.stringify(process.env))`], env());
  expect(result.code).toBe(0);
  const seen = JSON.parse(readFileSync(envFile, 'utf8')) as Record<string, string>;
  expect(seen.DEVICELAB_DEVICE_SERIALS.split(',').sort()).toEqual(lab.devices.map((d) => d.serial).sort());
  const ids = seen.DEVICELAB_DEVICE_IDS.split(',');
  expect(ids).toHaveLength(2);
  for (const id of ids) expect(id).toMatch(/^[0-9a-f-]{36}$/);
  expect(result.stderr).toMatch(/retained .*\n.*retained .*\n[^]*released /);
  await expectAllReleased();
  // The retain was real: the hub's history shows it, by this user, for each device.
  const history = await (await lab.api(lab.admin, `/Report/History?deviceId=${ids[0]}`)).json() as { events: { message: string; performedByName: string }[] };
  expect(history.events.filter((e) => e.performedByName === tester.login).map((e) => e.message))
    .toEqual(expect.arrayContaining(['Device Retained', 'Device Released']));
});

test('failure: run exits with the command\'s code and releases; a single argument runs through the shell', async () => {
  const result = await runCli(['run', '--device', lab.devices[0].serial, '--no-adb', '--', 'echo "on $DEVICELAB_DEVICE_SERIALS"; exit 7'], env());
  expect(result.code).toBe(7);
  expect(result.stdout).toBe(`on ${lab.devices[0].serial}\n`);
  await expectAllReleased();
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  test(`${signal}: passed to the command, the devices released, exit 128 + signal`, async () => {
    const running = startCli(['run', '--filter', 'os=android', '--no-adb', '--', process.execPath, '-e', WAITING_CHILD], env());
    await running.waitFor(/child started/);
    const [held] = (await Promise.all(lab.devices.map((d) => deviceState(lab, d.serial)))).filter((d) => d.retainedById);
    expect(held.retainedByUserName).toBe(tester.login);
    running.child.kill(signal);
    const result = await running.done;
    expect(result.stdout).toContain(`child got ${signal}`);
    expect(result.code).toBe(signal === 'SIGINT' ? 130 : 143);
    await expectAllReleased();
  });
}

test('SIGTERM while waiting for a device: stops waiting, releases, exits 143 without starting the command', async () => {
  const other = await lab.addUser('holder@example.com', ['Tester']);
  const holder = cliEnvironment(lab, other);
  await runCli(['retain', lab.devices[0].serial], holder);
  const running = startCli(['run', '--device', lab.devices[0].serial, '--device', lab.devices[1].serial, '--wait', '5m', '--no-adb',
    '--', 'echo should-not-run'], env());
  await running.waitFor(/waiting for 2 device\(s\)/);
  running.child.kill('SIGTERM');
  const result = await running.done;
  expect(result.code).toBe(143);
  expect(result.stdout).not.toContain('should-not-run');
  // Released by the command, or by the hub as soon as it sees the command's place in line was left.
  await waitFor(async () => (await deviceState(lab, lab.devices[1].serial)).retainedById === undefined, 10_000, 'device 1 free again');
  expect((await deviceState(lab, lab.devices[0].serial)).retainedByUserName).toBe(other.login);
  await runCli(['release', lab.devices[0].serial], holder);
});

test('--timeout stops the command (exit 124) and releases', async () => {
  const result = await runCli(['run', '--filter', 'os=android', '--no-adb', '--timeout', '2s', '--', process.execPath, '-e', WAITING_CHILD], env());
  expect(result.code).toBe(124);
  expect(result.stdout).toContain('child got SIGTERM');
  expect(result.stderr).toMatch(/longer than --timeout/);
  await expectAllReleased();
});

test('a command that does not exist: exit 127, released', async () => {
  const result = await runCli(['run', '--filter', 'os=android', '--no-adb', '--', 'no-such-command-xyz', '--flag'], env());
  expect(result.code).toBe(127);
  expect(result.stderr).toMatch(/Command not found: no-such-command-xyz/);
  await expectAllReleased();
});

test('--install uploads the file before it retains, installs it on the devices before the command; a file that is no app retains nothing', async () => {
  const result = await runCli(['run', '--filter', 'os=android', '--count', '2', '--no-adb', '--install', fixture('ContactManager.apk'), '--',
    'echo ok'], env());
  expect(result).toMatchObject({ code: 0 });
  expect(result.stderr).toMatch(/uploading ContactManager\.apk[^]*retained [^]*installed .* on 2 device\(s\)/);
  const devices = await (await lab.api(lab.admin, '/Device?BundleInstalled=com.example.android.contactmanager')).json() as unknown[];
  expect(devices).toHaveLength(2);
  await expectAllReleased();

  const notAnApp = await runCli(['run', '--filter', 'os=android', '--no-adb', '--install', fixture('README.md'), '--', 'echo should-not-run'], env());
  expect(notAnApp.code).toBe(2);
  expect(notAnApp.stdout).toBe('');
  expect(notAnApp.stderr).toMatch(/error: Cannot upload '.*README\.md': not an \.apk or \.ipa file/);
  expect(notAnApp.stderr).not.toMatch(/retained/);
  await expectAllReleased();
});

test('no device matches: exit 3, the command never runs', async () => {
  const result = await runCli(['run', '--filter', 'os=ios', '--no-adb', '--', 'echo should-not-run'], env());
  expect(result.code).toBe(3);
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(/No device matches --filter os=ios. `devicelab devices` shows what the lab has/);
});

test('adb through the hub tunnel: the command reaches its device as ANDROID_SERIAL; adb is disconnected and the device released after', async () => {
  const result = await runCli(['run', '--filter', 'os=android', '--', 'echo "serial=$ANDROID_SERIAL"; adb -s "$ANDROID_SERIAL" shell getprop ro.serialno'],
    cliEnvironment(lab, tester, adbEnv));
  expect(result).toMatchObject({ code: 0 });
  const [, address] = /^serial=(127\.0\.0\.1:\d+)$/m.exec(result.stdout) ?? [];
  expect(address).toBeDefined();
  const serialno = result.stdout.trim().split('\n').pop();
  expect(lab.devices.map((d) => d.serial)).toContain(serialno);
  await expectAllReleased();
  expect(await adb('devices')).not.toContain(address);
  // The hub recorded the adb connection with this user's key.
  const [device] = await (await lab.api(lab.admin, `/Device?AnyId=${serialno}`)).json() as { id: string }[];
  const history = await (await lab.api(lab.admin, `/Report/History?deviceId=${device.id}&take=50`)).json() as { events: { message: string }[] };
  expect(history.events.map((e) => e.message)).toContainEqual(expect.stringMatching(/^adb connection opened by runner@example\.com/));
});

test('connect --adb: a local port into the device until SIGINT, which closes it and releases the device it retained', async () => {
  const serial = lab.devices[1].serial;
  const connect = startCli(['connect', serial, '--adb', '--json'], cliEnvironment(lab, tester, adbEnv));
  await connect.waitFor(/Ctrl-C closes it/, 60_000);
  const { address, serialNumber } = JSON.parse(connect.output().stdout) as { address: string; serialNumber: string };
  expect(serialNumber).toBe(serial);
  expect((await adb('-s', address, 'shell', 'getprop', 'ro.serialno')).trim()).toBe(serial);
  expect((await deviceState(lab, serial)).retainedByUserName).toBe(tester.login);
  connect.child.kill('SIGINT');
  expect(await connect.done).toMatchObject({ code: 0 });
  expect((await deviceState(lab, serial)).retainedById).toBeUndefined();
  expect(await adb('devices')).not.toContain(address);
});
