/**
 * The retain ticket opens the device. Real adb clients (each user its own HOME, key and adb server)
 * against a labsim device through the gateway's adb endpoint and through the hub-relayed WebSocket tunnel.
 */
import { fixture } from '../../../scripts/jest/shared-files';
import { cliEnvironment, startCli } from '../../../cli/test/support/cli-process';
import { Output } from '../../../cli/src/output';
import { openTunnel, tunnelUrl, type TunnelTarget } from '../../../cli/src/tunnel';
import { startAdbClient, type AdbClient } from '../support/adb-client';
import { startTestLab, waitFor, type TestLab } from '../support/lab';

jest.setTimeout(180_000);

let lab: TestLab;
let alice: { login: string; token: string; id: string; adb: AdbClient };
let bob: { login: string; token: string; id: string; adb: AdbClient };

async function json(res: Response): Promise<any> {
  return res.json();
}

async function user(login: string) {
  const credentials = await lab.addUser(login, ['Tester']);
  const [self] = await json(await lab.api(credentials, '/User'));
  return { ...credentials, id: self.id as string, adb: await startAdbClient(login.split('@')[0]) };
}

async function addKey(who: typeof alice, key: string) {
  return json(await lab.api(who, `/User?action=addAdbKey&id=${who.id}`, {
    method: 'POST', body: new URLSearchParams({ key }), headers: { 'content-type': 'application/x-www-form-urlencoded' },
  }));
}

/** Whether `adb devices` of this client lists the address as a usable device. */
async function online(client: AdbClient, address: string): Promise<boolean> {
  const { stdout } = await client.adb(['devices']);
  return stdout.split('\n').some((line) => line.startsWith(address) && /\tdevice\s*$/.test(line));
}

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1 });
  alice = await user('alice@lab.test');
  bob = await user('bob@lab.test');
});

afterAll(async () => {
  await alice?.adb.stop();
  await bob?.adb.stop();
  await lab?.stop();
});

test('adb keys: registered strictly, listed to who may see the user, removable', async () => {
  const added = await addKey(alice, alice.adb.publicKey);
  expect(added.isSuccess).toBe(true);
  expect(added.data.fingerprint).toMatch(/^([0-9a-f]{2}:){15}[0-9a-f]{2}$/);
  const twice = await addKey(alice, alice.adb.publicKey);
  expect(twice).toEqual({ isSuccess: false, errorMessage: expect.stringContaining('already registered'), errorCode: 'ADB_KEY_EXISTS' });
  // One base64 character changed (to another one: the key is random, its 41st character may already be 'A').
  const key = alice.adb.publicKey;
  const broken = await addKey(alice, `${key.slice(0, 40)}${key[40] === 'A' ? 'B' : 'A'}${key.slice(41)}`);
  expect(broken).toEqual({ isSuccess: false, errorMessage: expect.stringContaining('Not an adb public key') });
  expect((await addKey(alice, 'ssh-rsa AAAA user@host')).isSuccess).toBe(false);
  // Bob may neither add to nor read Alice's keys.
  expect((await addKey({ ...bob, id: alice.id }, bob.adb.publicKey)).errorMessage).toContain('UserModify');
  expect((await json(await lab.api(bob, `/User/AdbKey?id=${alice.id}`))).errorMessage).toContain('UserList');
  const listed = await json(await lab.api(alice, `/User/AdbKey?id=${alice.id}`));
  expect(listed).toEqual([expect.objectContaining({ fingerprint: added.data.fingerprint, comment: expect.any(String) })]);
  const asAdmin = await json(await lab.api(lab.admin, `/User/AdbKey?id=${alice.id}`));
  expect(asAdmin).toHaveLength(1);
  const bobs = await addKey(bob, bob.adb.publicKey);
  expect(bobs.isSuccess).toBe(true);
  const remove = (fingerprint: string) => lab.api(bob, `/User?action=removeAdbKey&id=${bob.id}&fingerprint=${fingerprint}`, { method: 'POST' });
  expect((await json(await remove('00:11'))).errorMessage).toContain("no adb key with fingerprint '00:11'");
  expect(await json(await remove(bobs.data.fingerprint))).toEqual({ isSuccess: true });
  expect(await json(await lab.api(bob, `/User/AdbKey?id=${bob.id}`))).toEqual([]);
  expect((await addKey(bob, bob.adb.publicKey)).isSuccess).toBe(true);
});

test('the retainer reaches the device over adb; another user is refused; release drops it within 1 s', async () => {
  const serial = lab.devices[0].serial;
  const retained = await json(await lab.api(alice, `/Device?action=retain&id=${serial}`, { method: 'POST' }));
  expect(retained.isSuccess).toBe(true);
  const { gatewayAddress, gatewayPort } = retained.data;
  expect(gatewayPort).toBeGreaterThanOrEqual(7400);
  expect(gatewayPort).toBeLessThanOrEqual(7599);
  const address = `${gatewayAddress}:${gatewayPort}`;

  const connect = await alice.adb.adb(['connect', address]);
  expect(connect.stdout.trim()).toBe(`connected to ${address}`); // her key's signature opens it: no key prompt round
  await waitFor(() => online(alice.adb, address), 15_000, 'alice sees the device');
  const serialno = await alice.adb.adb(['-s', address, 'shell', 'getprop', 'ro.serialno']);
  expect(serialno.stdout.trim()).toBe(serial);
  // The endpoint passes the device's adb features on: with shell_v2 a failing command fails `adb shell` too.
  expect((await alice.adb.adb(['-s', address, 'shell', 'false'])).ok).toBe(false);
  expect((await alice.adb.adb(['-s', address, 'shell', 'true'])).ok).toBe(true);

  const install = await alice.adb.adb(['-s', address, 'install', fixture('ApiDemos-debug.apk')], 120_000);
  expect(install.stdout).toContain('Success');
  await waitFor(async () => {
    const [device] = await json(await lab.api(alice, `/Device?anyId=${serial}&allApplications=true`));
    return device.installedApplications?.some((a: { applicationIdentifier: string }) =>
      a.applicationIdentifier === 'io.appium.android.apis');
  }, 10_000, 'installedApplications shows the app installed over adb');
  // Instrumentation runs through the endpoint too (what a CI job's connected tests do): listed, run, RESULT_OK.
  const APIS = 'io.appium.android.apis';
  const listed = await alice.adb.adb(['-s', address, 'shell', 'pm', 'list', 'instrumentation']);
  expect(listed.stdout).toContain(`instrumentation:${APIS}/.app.LocalSampleInstrumentation (target=${APIS})\n`);
  const instrumented = await alice.adb.adb(['-s', address, 'shell', 'am', 'instrument', '-w', `${APIS}/.app.LocalSampleInstrumentation`]);
  expect(instrumented).toMatchObject({ stdout: 'INSTRUMENTATION_CODE: -1\n', ok: true });
  expect((await lab.world.amStartLog(serial)).at(-1)).toMatchObject({
    commandLine: `am instrument -w ${APIS}/.app.LocalSampleInstrumentation`, component: `${APIS}/${APIS}.app.LocalSampleInstrumentation`, ok: true,
  });

  await bob.adb.adb(['connect', address]);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  expect(await online(bob.adb, address)).toBe(false);

  const released = await json(await lab.api(alice, `/Device?action=release&id=${serial}`, { method: 'POST' }));
  expect(released.isSuccess).toBe(true);
  await waitFor(async () => !(await online(alice.adb, address)), 1_000, 'the connection dropped within 1 s');
  const shell = await alice.adb.adb(['-s', address, 'shell', 'echo', 'still-here'], 5_000);
  expect(shell.stdout).not.toContain('still-here');

  const history = await json(await lab.api(lab.admin, `/Report/History?deviceId=${serial}&take=100`));
  const notes = history.events.filter((e: { eventType: string }) => e.eventType === 'Note').map((e: { message: string }) => e.message);
  expect(notes).toEqual(expect.arrayContaining([
    expect.stringMatching(/^adb connection opened by alice@lab\.test from 127\.0\.0\.1:\d+ with key /),
    expect.stringMatching(/^adb connection refused from 127\.0\.0\.1:\d+: key .* is not one of alice@lab\.test's adb keys/),
  ]));
});

test('through the hub tunnel: devicelab connect gives an adb connection; release drops it', async () => {
  const serial = lab.devices[0].serial;
  const retained = await json(await lab.api(alice, `/Device?action=retain&id=${serial}`, { method: 'POST' }));
  expect(retained.isSuccess).toBe(true);
  const apiBase = `${lab.hub.url}/apiv1`;
  const basic = (who: { login: string; token: string }): TunnelTarget => ({
    url: tunnelUrl(apiBase, serial), authorization: `Basic ${Buffer.from(`${who.login}:${who.token}`).toString('base64')}`,
  });
  const out = new Output(false, { tty: false, colour: false });
  // Unauthenticated: refused before the upgrade, with the hub's failure text.
  const strangerRefusals: string[] = [];
  const stranger = await openTunnel(basic({ ...alice, token: 'wrong' }), out, { onRefused: (m) => strangerRefusals.push(m) });
  await alice.adb.adb(['connect', stranger.address], 10_000);
  await waitFor(async () => strangerRefusals.length > 0, 10_000, 'the hub refuses wrong credentials');
  expect(strangerRefusals[0]).toBe('401: Authentication required.');
  await stranger.close();
  await alice.adb.adb(['disconnect', stranger.address]);
  // What a CI job does: `devicelab connect <device>` with the ticket's authenticator, reading the adb connect line.
  const cli = startCli(['connect', serial], cliEnvironment(lab, undefined, {
    DEVICELAB_URL: lab.hub.url, DEVICELAB_TICKET: retained.data.authenticator,
  }));
  const bobRefusals: string[] = [];
  const bobTunnel = await openTunnel(basic(bob), out, { onRefused: (m) => bobRefusals.push(m) });
  try {
    await cli.waitFor(/adb connect 127\.0\.0\.1:\d+/);
    const address = /adb connect (127\.0\.0\.1:\d+)/.exec(cli.output().stdout)![1];
    await alice.adb.adb(['connect', address]);
    await waitFor(() => online(alice.adb, address), 15_000, 'alice sees the device through the tunnel');
    const serialno = await alice.adb.adb(['-s', address, 'shell', 'getprop', 'ro.serialno']);
    expect(serialno.stdout.trim()).toBe(serial);

    await bob.adb.adb(['connect', bobTunnel.address]);
    await waitFor(async () => bobRefusals.length > 0, 10_000, 'the hub refuses bob');
    expect(bobRefusals[0]).toMatch(/^403: .*not retained by you/);

    await lab.api(alice, `/Device?action=release&id=${serial}`, { method: 'POST' });
    await waitFor(async () => !(await online(alice.adb, address)), 1_000, 'the tunnelled connection dropped within 1 s');
    // The endpoint's event names the hub's client, not the gateway-local socket the tunnel arrived on.
    const history = await json(await lab.api(lab.admin, `/Report/History?deviceId=${serial}&take=100`));
    expect(history.events.map((e: { message: string }) => e.message)).toContainEqual(expect.stringMatching(
      /^adb connection opened by alice@lab\.test from 127\.0\.0\.1 \(alice@lab\.test, through the hub\) with key /));
    // The hub's own refusal is on the device's record too: who, from where, why.
    expect(history.events).toContainEqual(expect.objectContaining({
      eventType: 'Note', isSuccess: false,
      message: expect.stringMatching(/^Device connection through the hub refused for bob@lab\.test from \S+: .*not retained by you/),
    }));
    // adb reconnects through the tunnel; the hub refuses the released ticket, which ends `devicelab connect` (exit 4).
    await alice.adb.adb(['connect', address]).catch(() => undefined);
    const ended = await cli.done;
    expect(ended.code).toBe(4);
    expect(ended.stderr).toMatch(/refused the device tunnel \(HTTP 403/);
  } finally {
    cli.child.kill('SIGTERM');
    await cli.done;
    await bobTunnel.close();
  }
});

test('the next retain names the port the endpoint kept: its retainer gets in right after it returns, the previous one is refused', async () => {
  const serial = lab.devices[0].serial;
  const retain = async (who: typeof alice) => json(await lab.api(who, `/Device?action=retain&id=${serial}`, { method: 'POST' }));
  const first = await retain(alice);
  expect(first.isSuccess).toBe(true);
  const address = `${first.data.gatewayAddress}:${first.data.gatewayPort}`;
  await bob.adb.adb(['disconnect', address]); // his adb server keeps retrying the endpoint he was refused at earlier
  expect(await json(await lab.api(alice, `/Device?action=release&id=${serial}`, { method: 'POST' }))).toEqual({ isSuccess: true });
  const second = await retain(bob);
  expect(second.isSuccess).toBe(true);
  expect(second.data.gatewayPort).toBe(first.data.gatewayPort); // named at once: the hub did not wait for the gateway
  // Right after the retain returned: the endpoint holds the connection until the gateway has the retain.
  const connect = await bob.adb.adb(['connect', address]);
  expect(connect.stdout.trim()).toBe(`connected to ${address}`);
  await waitFor(() => online(bob.adb, address), 15_000, 'bob sees the device');
  expect((await bob.adb.adb(['-s', address, 'shell', 'getprop', 'ro.serialno'])).stdout.trim()).toBe(serial);
  // Alice's retain ended: her key opens nothing now.
  await alice.adb.adb(['disconnect', address]);
  await alice.adb.adb(['connect', address]);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  expect(await online(alice.adb, address)).toBe(false);
  expect(await json(await lab.api(bob, `/Device?action=release&id=${serial}`, { method: 'POST' }))).toEqual({ isSuccess: true });
  await waitFor(async () => !(await online(bob.adb, address)), 1_000, 'bob\'s connection dropped within 1 s');
});
