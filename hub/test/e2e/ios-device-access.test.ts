/**
 * A retained iPhone's holder gets a usbmux endpoint through the hub tunnel that lists only that
 * device. Debian's libimobiledevice tools (unchanged) run against `devicelab connect`'s local port.
 */
import { execFile, spawn } from 'node:child_process';
import { cliEnvironment, startCli } from '../../../cli/test/support/cli-process';
import { Output } from '../../../cli/src/output';
import { openTunnel, tunnelUrl } from '../../../cli/src/tunnel';
import { fixture } from '../../../scripts/jest/shared-files';
import { startTestLab, waitFor, type TestLab } from '../support/lab';

/** The bundle of the fixture app-info-iphone.ipa. */
const FIXTURE_BUNDLE = 'com.icyleaf.AppInfoDemo';

jest.setTimeout(180_000);

let lab: TestLab;

interface ToolResult { code: number; stdout: string; stderr: string }

function idevice(address: string, tool: string, ...args: string[]): Promise<ToolResult> {
  return new Promise((resolve) => {
    execFile(tool, args, { env: { ...process.env, USBMUXD_SOCKET_ADDRESS: address }, timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

beforeAll(async () => {
  lab = await startTestLab({ iosCount: 2 });
});

afterAll(async () => {
  await lab?.stop();
});

test('devicelab connect of a retained iPhone: idevice tools see only that device; release ends it', async () => {
  const [a, b] = lab.iosDevices;
  const alice = await lab.addUser('alice@lab.test', ['Tester']);
  const bob = await lab.addUser('bob@lab.test', ['Tester']);
  const retained = await (await lab.api(alice, `/Device?action=retain&id=${a.udid}`, { method: 'POST' })).json() as { isSuccess: boolean };
  expect(retained.isSuccess).toBe(true);

  const cli = startCli(['connect', a.udid], cliEnvironment(lab, alice));
  const bobCli = startCli(['connect', a.udid], cliEnvironment(lab, bob));
  try {
    await cli.waitFor(/USBMUXD_SOCKET_ADDRESS=127\.0\.0\.1:\d+/);
    const address = /USBMUXD_SOCKET_ADDRESS=(127\.0\.0\.1:\d+)/.exec(cli.output().stdout)![1];

    const list = await idevice(address, 'idevice_id', '-l');
    expect(list.code).toBe(0);
    expect(list.stdout.trim().split(/\s+/)).toEqual([a.udid]);
    const version = await idevice(address, 'ideviceinfo', '-u', a.udid, '-k', 'ProductVersion');
    expect(version).toMatchObject({ code: 0 });
    expect(version.stdout.trim()).toBe(a.productVersion);
    const other = await idevice(address, 'ideviceinfo', '-u', b.udid, '-k', 'ProductVersion');
    expect(other.code).not.toBe(0);
    expect(other.stdout).not.toContain(b.productVersion);

    // A long-lived connection: the device's syslog streams through the tunnel until the release.
    const syslog = spawn('idevicesyslog', ['-u', a.udid], { env: { ...process.env, USBMUXD_SOCKET_ADDRESS: address } });
    const exited = new Promise((resolve) => syslog.once('exit', resolve));
    let syslogText = '';
    syslog.stdout.on('data', (d: Buffer) => { syslogText += d.toString(); });
    await waitFor(async () => syslogText.split('\n').length > 3, 15_000, 'idevicesyslog streams the device log');

    // Bob does not hold the device (alice does): his CLI gets no tunnel, nor does his own WebSocket.
    const refusals: string[] = [];
    const bobTunnel = await openTunnel({
      url: tunnelUrl(`${lab.hub.url}/apiv1`, a.udid), authorization: `Basic ${Buffer.from(`${bob.login}:${bob.token}`).toString('base64')}`,
    }, new Output(false, { tty: false, colour: false }), { onRefused: (m) => refusals.push(m) });
    const asBob = await idevice(bobTunnel.address, 'idevice_id', '-l');
    await bobTunnel.close();
    expect(asBob.stdout).not.toContain(a.udid);
    expect(refusals[0]).toMatch(/^403: .*not retained by you/);
    expect((await bobCli.done).code).not.toBe(0);
    expect(bobCli.output().stdout).not.toMatch(/USBMUXD_SOCKET_ADDRESS/);

    expect((await (await lab.api(alice, `/Device?action=release&id=${a.udid}`, { method: 'POST' })).json() as { isSuccess: boolean }).isSuccess).toBe(true);
    await waitFor(async () => (await idevice(address, 'ideviceinfo', '-u', a.udid, '-k', 'ProductVersion')).code !== 0,
      5_000, 'the tools fail after release');
    // The open syslog connection was dropped: no line arrives after the release (the device logs about once a second).
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const streamed = syslogText.length;
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(syslogText.length).toBe(streamed);
    syslog.kill();
    await exited;
    const after = await idevice(address, 'idevice_id', '-l');
    expect(after.stdout).not.toContain(a.udid);
  } finally {
    cli.child.kill('SIGTERM');
    bobCli.child.kill('SIGTERM');
    await cli.done;
  }
});

test('devicelab connect --ticket of an iPhone prints the usbmux line; each client session is one Note event with its count', async () => {
  const [a] = lab.iosDevices;
  const carol = await lab.addUser('carol@lab.test', ['Tester']);
  const retained = await (await lab.api(carol, `/Device?action=retain&id=${a.udid}`, { method: 'POST' })).json() as
    { isSuccess: boolean; data: { authenticator: string } };
  expect(retained.isSuccess).toBe(true);
  // A CI job with only the ticket: no login, so the CLI learns from the hub what the tunnel carries.
  const cli = startCli(['connect', a.udid, '--ticket', retained.data.authenticator], cliEnvironment(lab, undefined, { DEVICELAB_URL: lab.hub.url }));
  try {
    await cli.waitFor(/USBMUXD_SOCKET_ADDRESS=127\.0\.0\.1:\d+/);
    expect(cli.output().stdout).toMatch(/^export USBMUXD_SOCKET_ADDRESS=127\.0\.0\.1:\d+$/m);
    expect(cli.output().stdout).not.toMatch(/adb connect/);
    const address = /USBMUXD_SOCKET_ADDRESS=(127\.0\.0\.1:\d+)/.exec(cli.output().stdout)![1];
    const version = await idevice(address, 'ideviceinfo', '-u', a.udid, '-k', 'ProductVersion');
    expect(version).toMatchObject({ code: 0 });
    expect(version.stdout.trim()).toBe(a.productVersion);
    expect(await idevice(address, 'ideviceinfo', '-u', a.udid, '-k', 'DeviceName')).toMatchObject({ code: 0 });
  } finally {
    cli.child.kill('SIGTERM');
    expect((await cli.done).code).toBe(0);
  }
  await lab.api(carol, `/Device?action=release&id=${a.udid}`, { method: 'POST' });

  const notes = async () => {
    const history = await (await lab.api(lab.admin, `/Report/History?deviceId=${a.udid}&take=200`)).json() as
      { events: { eventType: string; message: string }[] };
    return history.events.filter((e) => e.eventType === 'Note').map((e) => e.message);
  };
  // Each client's many usbmux connections (a tool opens several) are one session row with their count, written
  // when the release ends the session.
  const sessions = async (login: string) => (await notes()).filter((m) => m.startsWith(`usbmux session of ${login} `));
  await waitFor(async () => (await sessions('carol@lab.test')).length > 0, 10_000, 'carol\'s usbmux session is a Note event');
  expect(await sessions('carol@lab.test')).toEqual([
    expect.stringMatching(/^usbmux session of carol@lab\.test from 127\.0\.0\.1 \(through the hub\): 2 connections \(2 to lockdownd, 0 to device services\)$/),
  ]);
  // Alice ran ideviceinfo twice and idevicesyslog (a device service): still one row.
  expect(await sessions('alice@lab.test')).toEqual([
    expect.stringMatching(/^usbmux session of alice@lab\.test from 127\.0\.0\.1 \(through the hub\): \d+ connections \(\d+ to lockdownd, 1 to device services\)$/),
  ]);
});

test('an app ideviceinstaller puts on the iPhone through the usbmux endpoint is in the hub at once, as adb installs are', async () => {
  const [, b] = lab.iosDevices;
  const dave = await lab.addUser('dave@lab.test', ['Tester']);
  expect((await (await lab.api(dave, `/Device?action=retain&id=${b.udid}`, { method: 'POST' })).json() as { isSuccess: boolean }).isSuccess).toBe(true);
  const bundles = async () => {
    const devices = await (await lab.api(dave, '/Device?allApplications=true')).json() as
      { vendorUniqueIdentifier: string; installedApplications?: { applicationIdentifier: string }[] }[];
    const device = devices.find((d) => d.vendorUniqueIdentifier === b.udid);
    return (device?.installedApplications ?? []).map((app) => app.applicationIdentifier);
  };
  expect(await bundles()).not.toContain(FIXTURE_BUNDLE);
  const cli = startCli(['connect', b.udid], cliEnvironment(lab, dave));
  try {
    await cli.waitFor(/USBMUXD_SOCKET_ADDRESS=127\.0\.0\.1:\d+/);
    const address = /USBMUXD_SOCKET_ADDRESS=(127\.0\.0\.1:\d+)/.exec(cli.output().stdout)![1];
    const installed = await idevice(address, 'ideviceinstaller', '-u', b.udid, '-i', fixture('app-info-iphone.ipa'));
    expect(installed).toMatchObject({ code: 0 });
    expect(lab.world.iosFleet.installedApps(b.udid).map((app) => app.bundleId)).toContain(FIXTURE_BUNDLE);
    await waitFor(async () => (await bundles()).includes(FIXTURE_BUNDLE), 10_000, 'the hub lists the installed app');

    const removed = await idevice(address, 'ideviceinstaller', '-u', b.udid, '-U', FIXTURE_BUNDLE);
    expect(removed).toMatchObject({ code: 0 });
    await waitFor(async () => !(await bundles()).includes(FIXTURE_BUNDLE), 10_000, 'the hub no longer lists the app');
  } finally {
    cli.child.kill('SIGTERM');
    await cli.done;
    await lab.api(dave, `/Device?action=release&id=${b.udid}`, { method: 'POST' });
  }
});
