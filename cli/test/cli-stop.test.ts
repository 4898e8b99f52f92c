/**
 * How `devicelab run` and `devicelab connect` stop, against a real lab: a stopped `run` leaves nothing of its
 * command running (a shell's background job included) and releases its devices, also when it was started through
 * `npx devicelab` and npx is the one that gets the SIGTERM; `connect` ends at once when the hub refuses its tunnel
 * for good, and says what it released.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startTestLab, waitFor, type TestLab } from '../../hub/test/support/lab';
import { cliEnvironment, deviceState, startCli, type CliUser, type StartedCli } from './support/cli-process';

jest.setTimeout(180_000);

const REPO_ROOT = path.resolve(__dirname, '../..');

let lab: TestLab;
let tester: CliUser;
let scratch: string;

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1 });
  tester = await lab.addUser('stopper@example.com', ['Tester']);
  scratch = mkdtempSync(path.join(os.tmpdir(), 'devicelab-cli-stop-'));
}, 120_000);

/** The sleeps the tests' commands start: ended here should a test fail before its `run` ended them. */
const sleeps: number[] = [];
afterAll(async () => {
  for (const pid of sleeps) if (processStat(pid)) process.kill(pid, 'SIGKILL');
  await lab?.stop();
}, 60_000);

const serial = () => lab.devices[0].serial;

/** `pid state ppid pgrp` of a process from /proc; undefined once it is gone. Zombies count as gone. */
function processStat(pid: number): { ppid: number; pgrp: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid, pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return state === 'Z' ? undefined : { ppid: Number(ppid), pgrp: Number(pgrp) };
  } catch {
    return undefined;
  }
}

/** The living processes of process group `pgid`. */
function groupMembers(pgid: number): number[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number)
    .filter((pid) => processStat(pid)?.pgrp === pgid);
}

/**
 * A shell command that writes its pid (its process group's id, as `run` starts it in a group of its own) and that
 * of a background `sleep`, then waits: the shape of a test script that starts an emulator or a server.
 */
function backgroundJob(name: string): { command: string; pids: () => Promise<{ shell: number; sleep: number }> } {
  const file = path.join(scratch, `${name}.pids`);
  return {
    command: `sleep 300 & echo "$$ $!" > ${file}; wait`,
    pids: async () => {
      const { value } = await waitFor(async () => existsSync(file) && /^\d+ \d+\n$/.test(readFileSync(file, 'utf8'))
        && readFileSync(file, 'utf8'), 30_000, `${file} written`);
      const [shell, sleep] = value.trim().split(' ').map(Number);
      sleeps.push(sleep);
      return { shell, sleep };
    },
  };
}

async function expectReleased(): Promise<void> {
  await waitFor(async () => !(await deviceState(lab, serial())).retainedById, 30_000, 'the device released');
}

async function expectRetainedByTester(): Promise<void> {
  expect((await deviceState(lab, serial())).retainedByUserName).toBe(tester.login);
}

test('SIGTERM to run ends the command\'s whole process group (its background sleep too) and releases (exit 143)', async () => {
  const job = backgroundJob('sigterm');
  const running = startCli(['run', '--device', serial(), '--no-adb', '--', job.command], cliEnvironment(lab, tester));
  const { shell, sleep } = await job.pids();
  await expectRetainedByTester();
  expect(processStat(sleep)?.pgrp).toBe(shell);
  running.child.kill('SIGTERM');
  const result = await running.done;
  expect(result.code).toBe(143);
  expect(processStat(sleep)).toBeUndefined();
  expect(groupMembers(shell)).toEqual([]);
  await expectReleased();
});

test('--timeout ends the whole process group and releases (exit 124)', async () => {
  const job = backgroundJob('timeout');
  const running = startCli(['run', '--device', serial(), '--no-adb', '--timeout', '3s', '--', job.command], cliEnvironment(lab, tester));
  const { shell, sleep } = await job.pids();
  const result = await running.done;
  expect(result.code).toBe(124);
  expect(processStat(sleep)).toBeUndefined();
  expect(groupMembers(shell)).toEqual([]);
  await expectReleased();
});

test('what the command leaves running when it ends is ended too', async () => {
  const job = backgroundJob('left');
  const result = await startCli(['run', '--device', serial(), '--no-adb', '--', job.command.replace('wait', 'exit 3')],
    cliEnvironment(lab, tester)).done;
  expect(result.code).toBe(3);
  const { shell, sleep } = await job.pids();
  expect(processStat(sleep)).toBeUndefined();
  expect(groupMembers(shell)).toEqual([]);
  await expectReleased();
});

test('started as `npx devicelab run`: SIGTERM to npx ends devicelab, the command\'s group, and releases the device', async () => {
  const job = backgroundJob('npx');
  const npx = spawn('npx', ['devicelab', 'run', '--device', serial(), '--no-adb', '--', job.command],
    { cwd: REPO_ROOT, env: cliEnvironment(lab, tester), stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  npx.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  npx.stdout!.resume();
  const { shell, sleep } = await job.pids();
  const devicelab = processStat(shell)!.ppid;
  expect(readFileSync(`/proc/${devicelab}/cmdline`, 'utf8')).toContain('devicelab');
  await expectRetainedByTester();
  npx.kill('SIGTERM');
  await expectReleased();
  await waitFor(async () => !processStat(devicelab) && !processStat(sleep) && groupMembers(shell).length === 0, 30_000,
    `devicelab and its command ended; stderr: ${stderr}`);
});

/** The `adb connect` address a running `connect` printed. */
async function tunnelAddress(connect: StartedCli): Promise<{ host: string; port: number }> {
  await connect.waitFor(/Ctrl-C closes it/, 60_000);
  const [, host, port] = /adb connect ([\d.]+):(\d+)/.exec(connect.output().stdout) ?? [];
  return { host, port: Number(port) };
}

/** One client connection through the tunnel, as adb makes them: resolves when the tunnel closes it (or refuses it). */
function touch(address: { host: string; port: number }): Promise<void> {
  return new Promise((resolve) => {
    const socket = net.connect(address.port, address.host);
    socket.on('error', () => resolve());
    socket.on('close', () => resolve());
  });
}

test('connect --ticket after the device was released: says so once and exits 4, however often adb reconnects', async () => {
  const retain = await (await lab.api(tester, `/Device?action=retain&id=${serial()}`, { method: 'POST' })).json() as
    { data: { authenticator: string } };
  const connect = startCli(['connect', serial(), '--ticket', retain.data.authenticator],
    cliEnvironment(lab, undefined, { DEVICELAB_URL: lab.hub.url }));
  const address = await tunnelAddress(connect);
  await lab.api(tester, `/Device?action=release&id=${serial()}`, { method: 'POST' });
  // adb's reconnects: each connection is refused by the hub; the first refusal ends `connect`.
  const ended = (async () => {
    for (let attempt = 0; attempt < 20 && connect.child.exitCode === null; attempt++) await touch(address);
  })();
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([connect.done, new Promise<undefined>((resolve) => { timer = setTimeout(resolve, 30_000, undefined); })]);
  clearTimeout(timer);
  await ended;
  if (!result) connect.child.kill('SIGKILL');
  expect(result?.code).toBe(4);
  expect(result!.stderr.match(/refused the (device )?tunnel/g)).toHaveLength(1);
  expect(result!.stderr).toMatch(/HTTP 40[13]/);
});

test('connect: Ctrl-C closes the tunnel and says which device it released', async () => {
  const connect = startCli(['connect', serial()], cliEnvironment(lab, tester));
  await tunnelAddress(connect);
  await expectRetainedByTester();
  connect.child.kill('SIGINT');
  const result = await connect.done;
  expect(result.code).toBe(0);
  expect(result.stderr).toMatch(new RegExp(`released .*${serial()}`));
  expect((await deviceState(lab, serial())).retainedById).toBeUndefined();
});
