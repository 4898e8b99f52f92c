/**
 * The built `devicelab` binary against a real lab (hub + gateway + labsim): listing, retaining (filters, --count,
 * --wait, two clients racing for one device), releasing, the reports, login and token rotation, and the exit
 * codes a CI script branches on.
 */
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { startTestLab, waitFor, type TestLab } from '../../hub/test/support/lab';
import { cliEnvironment, deviceState, runCli, startCli, type CliUser } from './support/cli-process';

// Each test starts several CLI processes on a shared, busy machine.
jest.setTimeout(180_000);

let lab: TestLab;
let tester: CliUser;
let other: CliUser;

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 3, iosCount: 1 });
  tester = await lab.addUser('tester@example.com', ['Tester']);
  other = await lab.addUser('other@example.com', ['Tester']);
}, 120_000);

afterAll(() => lab?.stop(), 60_000);

const asTester = (extra?: Record<string, string>) => cliEnvironment(lab, tester, extra);
const json = <T>(stdout: string): T => JSON.parse(stdout) as T;

/** A port nothing listens on (taken from the system, then closed). */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

test('devices: a table with every device, --json one parseable document, --filter narrows it', async () => {
  const table = await runCli(['devices'], asTester());
  expect(table.code).toBe(0);
  expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+MODEL\s+OS\s+SERIAL\s+STATE/);
  for (const spec of lab.devices) expect(table.stdout).toContain(spec.serial);
  expect(table.stderr).toBe('');

  const all = await runCli(['devices', '--json'], asTester());
  expect(all.code).toBe(0);
  const devices = json<{ serialNumber: string; operatingSystem: string }[]>(all.stdout);
  expect(devices).toHaveLength(4);

  const android = json<{ serialNumber: string; operatingSystem: string }[]>(
    (await runCli(['devices', '--filter', 'os=android,free', '--json'], asTester())).stdout);
  expect(android.map((d) => d.serialNumber).sort()).toEqual(lab.devices.map((d) => d.serial).sort());
  const ios = json<{ operatingSystem: string }[]>((await runCli(['--json', 'devices', '--filter', 'os=ios'], asTester())).stdout);
  expect(ios.map((d) => d.operatingSystem)).toEqual(['iOS']);
  const model = lab.devices[0].model;
  const byModel = json<{ model: string }[]>((await runCli(['devices', '--filter', `model=${model.toLowerCase()}`, '--json'], asTester())).stdout);
  expect(byModel.length).toBeGreaterThan(0);
  expect(byModel.every((d) => d.model === model)).toBe(true);
  const none = await runCli(['devices', '--filter', 'minOs=99', '--json'], asTester());
  expect(json(none.stdout)).toEqual([]);
});

test('retain --count prints the ids and holds them; release gives them back', async () => {
  const retained = await runCli(['retain', '--filter', 'os=android', '--count', '2'], asTester());
  expect(retained.code).toBe(0);
  const ids = retained.stdout.trim().split('\n');
  expect(ids).toHaveLength(2);
  for (const id of ids) expect((await deviceState(lab, id)).retainedByUserName).toBe(tester.login);

  const released = await runCli(['release', ...ids], asTester());
  expect(released.code).toBe(0);
  for (const id of ids) expect((await deviceState(lab, id)).retainedById).toBeUndefined();
});

test('retain --json: one document with each device\'s id and access ticket', async () => {
  const serial = lab.devices[0].serial;
  const result = await runCli(['retain', serial, '--json'], asTester());
  expect(result.code).toBe(0);
  const [ticket] = json<{ id: string; serialNumber: string; authenticator: string }[]>(result.stdout);
  expect(ticket.serialNumber).toBe(serial);
  expect(ticket.authenticator).toEqual(expect.any(String));
  expect((await runCli(['release', ticket.id, '--json'], asTester())).code).toBe(0);
});

test('two clients racing for the one free device: exactly one gets it, the other waits and exits 3', async () => {
  const [first, second] = await Promise.all([tester, other].map((user) =>
    runCli(['retain', '--filter', 'os=ios', '--wait', '3s'], cliEnvironment(lab, user))));
  const codes = [first.code, second.code].sort();
  expect(codes).toEqual([0, 3]);
  const loser = first.code === 3 ? first : second;
  expect(loser.stderr).toMatch(/Fewer than 1 device\(s\) matching --filter os=ios were free within 0:03.*retained by/);
  expect(loser.stderr).toMatch(/Wait longer/);
  expect(loser.stdout).toBe('');
  const winner = first.code === 0 ? { result: first, user: tester } : { result: second, user: other };
  expect((await deviceState(lab, winner.result.stdout.trim())).retainedByUserName).toBe(winner.user.login);
  await runCli(['release', winner.result.stdout.trim()], cliEnvironment(lab, winner.user));
});

test('retain --wait waits (a progress line on stderr) until the holder releases, then retains', async () => {
  const serial = lab.devices[1].serial;
  expect((await runCli(['retain', serial], cliEnvironment(lab, other))).code).toBe(0);
  const waiting = startCli(['retain', serial, '--wait', '1m'], asTester());
  await waiting.waitFor(/waiting for 1 device\(s\) \(.*\): 0 retained/);
  expect((await runCli(['release', serial], cliEnvironment(lab, other))).code).toBe(0);
  const result = await waiting.done;
  expect(result.code).toBe(0);
  expect((await deviceState(lab, serial)).retainedByUserName).toBe(tester.login);
  expect(result.stderr).not.toMatch(/\x1b\[/); // no terminal codes when stderr is not a terminal
  await runCli(['release', serial], asTester());
});

/** Runs `body` while another user holds the first Android device: of the lab's Android devices, one fewer is free. */
async function withOneHeld(body: () => Promise<void>): Promise<void> {
  const held = lab.devices[0].serial;
  expect((await runCli(['retain', held], cliEnvironment(lab, other))).code).toBe(0);
  try {
    await body();
  } finally {
    await runCli(['release', held], cliEnvironment(lab, other));
  }
}

test('retain all-or-nothing: not enough free devices within --wait releases the ones it got (exit 3)', () => withOneHeld(async () => {
  const all = lab.devices.length;
  const result = await runCli(['retain', '--filter', 'os=android', '--count', String(all), '--wait', '1s'], asTester());
  expect(result.code).toBe(3);
  expect(result.stderr).toMatch(new RegExp(`${all - 1} retained, now released`));
  for (const spec of lab.devices.slice(1)) expect((await deviceState(lab, spec.serial)).retainedById).toBeUndefined();
}));

test('retain Ctrl-C while waiting releases what it got and exits 130', () => withOneHeld(async () => {
  const all = lab.devices.length;
  const waiting = startCli(['retain', '--filter', 'os=android', '--count', String(all), '--wait', '5m'], asTester());
  await waiting.waitFor(new RegExp(`waiting for ${all} device\\(s\\)`));
  waiting.child.kill('SIGINT');
  const result = await waiting.done;
  expect(result.code).toBe(130);
  expect(result.stderr).toMatch(/Stopped by SIGINT/);
  // Released by the command, or (a device handed to a place in line the command had just left) by the hub as soon
  // as it sees the place was left.
  await waitFor(async () => (await Promise.all(lab.devices.slice(1).map((spec) => deviceState(lab, spec.serial))))
    .every((device) => device.retainedById === undefined), 10_000, 'every device the command was waiting for free again');
}));

test('retain --count beyond the devices that match at all: says so at once, whatever --wait (exit 3)', async () => {
  const result = await runCli(['retain', '--filter', 'os=android', '--count', String(lab.devices.length + 1), '--wait', '10m'], asTester());
  expect(result.code).toBe(3);
  expect(result.stderr).toMatch(new RegExp(`Only ${lab.devices.length} device\\(s\\) match --filter os=android`));
});

test('exit codes: usage 2, API failure 1, not authorised 4, unreachable 5; each message says what to do', async () => {
  const usage = await runCli(['retain'], asTester());
  expect(usage.code).toBe(2);
  expect(usage.stderr).toMatch(/Name the device\(s\) to retain, or give --filter/);
  const badFilter = await runCli(['devices', '--filter', 'colour=red'], asTester());
  expect(badFilter.code).toBe(2);
  expect(badFilter.stderr).toMatch(/Unknown filter 'colour'. Filters: os=/);
  expect((await runCli(['no-such-command'], asTester())).code).toBe(2);

  const unknown = await runCli(['release', 'NO-SUCH-DEVICE'], asTester());
  expect(unknown.code).toBe(1);
  expect(unknown.stderr).toMatch(/devicelab: error: .+\./);

  const held = lab.devices[2].serial;
  await runCli(['retain', held], cliEnvironment(lab, other));
  const notYours = await runCli(['release', held], asTester());
  expect(notYours.code).toBe(1);
  expect(notYours.stderr).toMatch(/other@example.com.*`devicelab devices` shows who holds it/);
  await runCli(['release', held], cliEnvironment(lab, other));

  const wrongToken = await runCli(['devices'], asTester({ DEVICELAB_TOKEN: 'wrong-token' }));
  expect(wrongToken.code).toBe(4);
  expect(wrongToken.stderr).toMatch(/HTTP 401.*devicelab login/);
  const entitlement = await runCli(['history'], asTester());
  expect(entitlement.code).toBe(4);
  expect(entitlement.stderr).toMatch(/entitlement: UserList.*Ask your lab admin/);
  const unconfigured = await runCli(['devices'], cliEnvironment(lab, undefined));
  expect(unconfigured.code).toBe(4);
  expect(unconfigured.stderr).toMatch(/Run `devicelab login`, or set DEVICELAB_URL/);

  const closedPort = await freePort();
  const unreachable = await runCli(['devices'], asTester({ DEVICELAB_URL: `http://127.0.0.1:${closedPort}` }));
  expect(unreachable.code).toBe(5);
  expect(unreachable.stderr).toMatch(new RegExp(`Cannot reach the hub at http://127.0.0.1:${closedPort} \\(ECONNREFUSED\\). `
    + 'Check the address \\(from DEVICELAB_URL\\)'));
});

test('a value the hub cannot read: the failure names the parameter the hub names (exit 1)', async () => {
  const bad = await runCli(['history', '--from', 'yesterday'], cliEnvironment(lab, lab.admin));
  expect(bad.code).toBe(1);
  expect(bad.stderr).toContain("String 'yesterday' was not recognized as a valid DateTime. (parameter 'fromDate')");
});

test('login stores the credentials (mode 0600) for later commands; --url/--user/--token override them', async () => {
  const env = cliEnvironment(lab, undefined);
  const login = await runCli(['login', '--url', `${lab.hub.url}/apiv1`, '--user', tester.login, '--token', tester.token, '--json'], env);
  expect(login.code).toBe(0);
  const { configFile } = json<{ configFile: string }>(login.stdout);
  expect(configFile).toBe(path.join(env.XDG_CONFIG_HOME!, 'devicelab', 'config.json'));
  expect(statSync(configFile).mode & 0o777).toBe(0o600);
  expect(json(readFileSync(configFile, 'utf8'))).toEqual({ url: `${lab.hub.url}/apiv1`, user: tester.login, token: tester.token });
  expect((await runCli(['devices'], env)).code).toBe(0);
  const overridden = await runCli(['devices', '--token', 'wrong'], env);
  expect(overridden.code).toBe(4);
  expect(overridden.stderr).toMatch(/token \(from --token\)/);

  const refused = await runCli(['login', '--url', lab.hub.url, '--user', tester.login, '--token', 'wrong'], cliEnvironment(lab, undefined));
  expect(refused.code).toBe(4);
});

test('token rotate: a new token that works, the old one refused, the stored login updated', async () => {
  const user = await lab.addUser('rotator@example.com', ['Tester']);
  const env = cliEnvironment(lab, undefined);
  await runCli(['login', '--url', lab.hub.url, '--user', user.login, '--token', user.token], env);
  const rotated = await runCli(['token', 'rotate', '--json'], env);
  expect(rotated.code).toBe(0);
  const { apiToken, storedIn } = json<{ apiToken: string; storedIn: string }>(rotated.stdout);
  expect(apiToken).not.toBe(user.token);
  expect(json<{ token: string }>(readFileSync(storedIn, 'utf8')).token).toBe(apiToken);
  expect((await runCli(['devices'], env)).code).toBe(0);
  expect((await runCli(['devices'], cliEnvironment(lab, user))).code).toBe(4);
});

test('history, usage, gateways and users: tables, and --json documents', async () => {
  const admin = cliEnvironment(lab, lab.admin);
  const history = await runCli(['history', '--take', '5', '--json'], admin);
  expect(history.code).toBe(0);
  const events = json<{ count: number; events: { eventType: string }[] }>(history.stdout);
  expect(events.events.length).toBeLessThanOrEqual(5);
  expect(events.count).toBeGreaterThan(0);
  const historyTable = await runCli(['history', '--device', lab.devices[1].serial], admin);
  expect(historyTable.stdout).toMatch(/DeviceRetained\s+.*Device Released/);

  const usage = await runCli(['usage', '--json'], admin);
  expect(json<{ deviceUsage: { performedByName: string }[] }>(usage.stdout).deviceUsage.length).toBeGreaterThan(0);
  expect((await runCli(['usage'], admin)).stdout).toMatch(/^DEVICE\s+USER\s+EVENT/);

  const gateways = await runCli(['gateways', '--json'], admin);
  expect(json<{ name: string }[]>(gateways.stdout).map((g) => g.name)).toEqual(['lab-gateway']);
  expect((await runCli(['gateways'], admin)).stdout).toMatch(/lab-gateway\s+127.0.0.1:9000/);

  const users = json<{ email: string }[]>((await runCli(['users', '--json'], admin)).stdout).map((u) => u.email);
  expect(users).toEqual(expect.arrayContaining(['admin', tester.login, other.login]));
  const self = json<{ email: string }[]>((await runCli(['users', '--json'], asTester())).stdout).map((u) => u.email);
  expect(self).toEqual([tester.login]);
});

test('--help of every command shows an example; completion scripts for bash and zsh load', async () => {
  const env = cliEnvironment(lab, undefined);
  const commands = ['devices', 'retain', 'release', 'run', 'apps upload', 'apps list', 'install', 'uninstall', 'launch',
    'reboot', 'reset', 'port', 'logs', 'metrics', 'marker start', 'marker stop', 'connect', 'history', 'usage',
    'gateways', 'users', 'token rotate', 'login', 'completion'];
  for (let i = 0; i < commands.length; i += 4) {
    await Promise.all(commands.slice(i, i + 4).map(async (command) => {
      const help = await runCli([...command.split(' '), '--help'], env);
      expect({ command, code: help.code }).toEqual({ command, code: 0 });
      expect({ command, example: /Examples?:\n {2}devicelab /.test(help.stdout) }).toEqual({ command, example: true });
    }));
  }
  const bash = await runCli(['completion', 'bash'], env);
  expect(bash.code).toBe(0);
  const words = execFileSync('bash', ['-c', `${bash.stdout}\nCOMP_WORDS=(devicelab marker s); COMP_CWORD=2; _devicelab; echo "\${COMPREPLY[@]}"`]).toString();
  expect(words.trim().split(' ').sort()).toEqual(['start', 'stop']);
  const zsh = await runCli(['completion', 'zsh'], env);
  expect(zsh.stdout).toMatch(/^#compdef devicelab/);
  expect(zsh.stdout).toContain('"marker") candidates=(\'start\' \'stop\'');
  expect((await runCli(['completion', 'fish'], env)).code).toBe(2);
});
