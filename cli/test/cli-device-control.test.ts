/**
 * The built `devicelab` binary against a real lab: uploads (a progress bar on a pseudo-terminal, plain lines in a
 * log), installs, launches and uninstalls, the device log (also --follow), metrics and markers, reboot, reset,
 * and the USB port of a device on the simulated Cambrionix hub.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestLab, waitFor, type TestLab } from '../../hub/test/support/lab';
import { fixture } from '../../scripts/jest/shared-files';
import { CLI_MAIN, cliEnvironment, runCli, startCli, type CliUser } from './support/cli-process';

const exec = promisify(execFile);

// Each test starts several CLI processes on a shared, busy machine.
jest.setTimeout(180_000);

let lab: TestLab;
let tester: CliUser;
let serial: string;

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 2, usbHub: {} });
  tester = await lab.addUser('control@example.com', ['Tester']);
  serial = lab.devices[0].serial;
}, 120_000);

afterAll(() => lab?.stop(), 60_000);

const env = (extra?: Record<string, string>) => cliEnvironment(lab, tester, extra);

interface WireDevice { availability: string; installedApplications?: { applicationIdentifier: string }[] }
async function device(id: string): Promise<WireDevice> {
  const [found] = await (await lab.api(lab.admin, `/Device?AnyId=${id}&applications=true`)).json() as WireDevice[];
  return found;
}

test('apps upload on a terminal: a redrawn progress bar with bytes and rate on stderr, the id on stdout', async () => {
  // script(1) gives the CLI a pseudo-terminal as stdin/stdout/stderr, as an interactive shell would.
  const command = `${process.execPath} ${CLI_MAIN} apps upload ${fixture('ApiDemos-debug.apk')}`;
  const { stdout } = await exec('script', ['-qfec', command, '/dev/null'], { env: env() });
  expect(stdout).toMatch(/\r\x1b\[2KApiDemos-debug\.apk \[#{10,24}\] 100% 3\.0 MiB \/ 3\.0 MiB {2}(\d+ |[\d.]+ [KMG]i)B\/s/);
  expect(stdout).toMatch(/\r\x1b\[2KApiDemos-debug\.apk \[-{10,24}\] {3}0% 0 B \/ 3\.0 MiB/);
  // Frames between 0% and 100% depend on how fast loopback carries 3 MB (none when it all goes in one redraw
  // interval), so they are not asserted here.
  // The id on a line of its own, after the progress line was cleared (stdout and stderr share the terminal).
  expect(stdout).toMatch(/(^|\r\x1b\[2K)[0-9a-f-]{36}\r?$/m);
});

test('apps upload in a log (not a terminal): plain progress lines, no terminal codes; NO_COLOR is honoured', async () => {
  const result = await runCli(['apps', 'upload', fixture('ContactManager.apk')], env({ NO_COLOR: '1' }));
  expect(result).toMatchObject({ code: 0 });
  expect(result.stdout).toMatch(/^[0-9a-f-]{36}\n$/);
  expect(result.stderr).toMatch(/^devicelab: uploading ContactManager\.apk: 0% 0 B \/ 25\.3 KiB/m);
  expect(result.stderr).toMatch(/^devicelab: uploading ContactManager\.apk: 100% 25\.3 KiB \/ 25\.3 KiB/m);
  expect(result.stderr).not.toMatch(/\x1b\[|\r/);
  const list = JSON.parse((await runCli(['apps', 'list', '--json'], env())).stdout) as { id: string; applicationIdentifier: string }[];
  expect(list.map((app) => app.applicationIdentifier)).toEqual(expect.arrayContaining(['com.example.android.contactmanager', 'io.appium.android.apis']));
  expect((await runCli(['apps', 'list'], env())).stdout).toMatch(/^ID\s+NAME\s+PACKAGE\s+VERSION/);
  const missing = await runCli(['apps', 'upload', '/no/such/file.apk'], env());
  expect(missing.code).toBe(2);
  expect(missing.stderr).toMatch(/Cannot upload '\/no\/such\/file.apk'.*Give the path of an .apk or .ipa file/);
});

test('install (by package id), launch, uninstall: the device shows each effect', async () => {
  await runCli(['retain', serial], env());
  const installed = await runCli(['install', 'com.example.android.contactmanager', serial, '--json'], env());
  expect(installed.code).toBe(0);
  expect(JSON.parse(installed.stdout)).toMatchObject({ device: serial });
  expect((await device(serial)).installedApplications?.map((a) => a.applicationIdentifier)).toContain('com.example.android.contactmanager');

  expect((await runCli(['launch', 'com.example.android.contactmanager', serial], env())).code).toBe(0);
  const uninstalled = await runCli(['uninstall', 'com.example.android.contactmanager', serial], env());
  expect(uninstalled.code).toBe(0);
  expect((await device(serial)).installedApplications?.map((a) => a.applicationIdentifier) ?? []).not.toContain('com.example.android.contactmanager');
  const unknownApp = await runCli(['install', 'com.example.nothing', serial], env());
  expect(unknownApp.code).toBe(1);
  expect(unknownApp.stderr).toMatch(/No application 'com.example.nothing'.*`devicelab apps upload <file>` adds one/);
  // A local file is uploaded first, then installed.
  expect((await runCli(['install', fixture('ContactManager.apk'), serial], env())).code).toBe(0);
  await runCli(['release', serial], env());
});

test('a device that refuses an install: exit 1, the device\'s reason, and the advice for its code', async () => {
  await runCli(['retain', serial], env());
  await lab.world.failNextInstall(serial, 'INSUFFICIENT_STORAGE');
  const refused = await runCli(['install', fixture('ContactManager.apk'), serial], env());
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/failed: Failure \[INSTALL_FAILED_INSUFFICIENT_STORAGE\]/);
  expect(refused.stderr).toMatch(/The device is out of storage: uninstall apps from it/);
  await runCli(['release', serial], env());
});

test('logs: the last lines; --follow prints new lines until Ctrl-C (exit 0)', async () => {
  const logs = await runCli(['logs', serial, '--lines', '20'], env());
  expect(logs.code).toBe(0);
  const lines = logs.stdout.trim().split('\n');
  expect(lines.length).toBeGreaterThan(1);
  expect(lines.length).toBeLessThanOrEqual(20);
  const asJson = JSON.parse((await runCli(['logs', serial, '--lines', '5', '--json'], env())).stdout) as string[];
  expect(asJson.length).toBeLessThanOrEqual(5);

  const follow = startCli(['logs', serial, '--lines', '3', '--follow', '--interval', '1s'], env());
  await follow.waitFor(/\n/);
  const first = follow.output().stdout.split('\n').length;
  await waitFor(async () => follow.output().stdout.split('\n').length > first + 2, 60_000, 'new log lines');
  follow.child.kill('SIGINT');
  const result = await follow.done;
  expect(result.code).toBe(0);
  const printed = result.stdout.trim().split('\n');
  expect(new Set(printed).size).toBeGreaterThan(first); // new lines, not the same window again and again
});

test('marker start/stop and metrics: a table, --csv, and the hub\'s JSON document', async () => {
  const markerStarted = Date.now();
  expect((await runCli(['marker', 'start', serial, 'cli flow'], env())).code).toBe(0);
  const stopTwice = await runCli(['marker', 'stop', serial, 'never started'], env());
  expect(stopTwice.code).toBe(1);
  expect(stopTwice.stderr).toMatch(/Start it first with `devicelab marker start/);
  await waitFor(async () => {
    const query = await runCli(['metrics', serial, '--fields', 'Used,Load', '--since', '5m', '--json'], env());
    // A field is known from the first sample that has it (Load, a CPU delta, from the second): until then the hub
    // says so (exit 1), and that is all it may say.
    if (query.code !== 0) {
      expect(query.stderr).toMatch(/Unknown field '(Used|Load)' in table sample/);
      return false;
    }
    const doc = JSON.parse(query.stdout);
    const times: string[] = (doc.results?.[0]?.series?.[0]?.values ?? []).map((row: unknown[]) => row[0]);
    return times.some((time) => Date.parse(time) > markerStarted + 1000);
  }, 90_000, 'a sample inside the marker');
  expect((await runCli(['marker', 'stop', serial, 'cli flow'], env())).code).toBe(0);

  const table = await runCli(['metrics', serial, '--fields', 'Used,Load', '--marker', 'cli flow'], env());
  expect(table.code).toBe(0);
  expect(table.stdout).toMatch(/^sample \(marker=cli flow.*\ntime\s+Used\s+Load\n/);
  const csv = await runCli(['metrics', serial, '--fields', 'Used', '--aggr', 'mean,max', '--since', '10m', '--csv'], env());
  expect(csv.stdout.split(/\r?\n/)[0]).toBe('name,tags,time,mean_Used,max_Used');
  const wrong = await runCli(['metrics', serial, '--table', 'nope'], env());
  expect(wrong.code).toBe(1);
  expect(wrong.stderr).toMatch(/Unknown metrics table 'nope'.*`devicelab metrics --help`/);
});

test('reboot and reset: the device goes Offline and comes back', async () => {
  const other = lab.devices[1].serial;
  await runCli(['retain', other], env());
  expect((await runCli(['reboot', other], env())).code).toBe(0);
  expect((await device(other)).availability).toBe('Offline');
  await waitFor(async () => (await device(other)).availability === 'Online', 60_000, 'back Online');
  const reset = await runCli(['reset', other, '--uninstall-all', '--no-reboot', '--json'], env());
  expect(reset.code).toBe(0);
  expect(JSON.parse(reset.stdout)).toEqual({ reset: other });
  await runCli(['release', other], env());
});

test('port off / data on the USB hub (admin); a tester lacks the entitlement (exit 4)', async () => {
  const admin = cliEnvironment(lab, lab.admin);
  expect((await runCli(['port', serial, 'off'], admin)).code).toBe(0);
  expect((await device(serial)).availability).toBe('Offline');
  expect((await runCli(['port', serial, 'data'], admin)).code).toBe(0);
  await waitFor(async () => (await device(serial)).availability === 'Online', 60_000, 'Online after data');
  const denied = await runCli(['port', serial, 'charge'], env());
  expect(denied.code).toBe(4);
  expect(denied.stderr).toMatch(/SystemManageUsbHubs/);
  expect((await runCli(['port', serial, 'sideways'], admin)).code).toBe(2);
});
