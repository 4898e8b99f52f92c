/**
 * The live system log through Debian's idevicesyslog (syslog_relay), and a restart through idevicediagnostics
 * (diagnostics_relay): the device leaves usbmux (Detached), is away while it boots, and comes back (Attached)
 * with its pairing, where idevicesyslog picks it up again.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { LabWorld, iosSpecFromPreset } from '../src';
import { waitFor } from './helpers';
import { UsbmuxListener, idevice } from './ios-helpers';

let world: LabWorld;
let run: ReturnType<typeof idevice>;
const spec = iosSpecFromPreset('iphone-15-pro', 4);
/** A device line as idevicesyslog prints it (it leaves out the device's host name). */
const LINE = /^\w{3} [ \d]\d \d\d:\d\d:\d\d [^[\s]+?(?:\([^)]*\))?\[\d+\] <\w+>: .*$/;

beforeAll(async () => {
  world = new LabWorld();
  await world.start();
  await world.addIosDevice(spec);
  run = idevice(world);
  expect((await run('idevicepair', 'pair')).code).toBe(0);
}, 60_000);

afterAll(async () => {
  await world?.stop();
}, 60_000);

/** idevicesyslog running against the world; its output so far, line by line. */
function startSyslog(...args: string[]): { child: ChildProcess; lines: () => string[] } {
  const child = spawn('idevicesyslog', ['-u', spec.udid, '--no-colors', ...args], { env: { ...process.env, ...world.env() }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString('utf8'); });
  child.stderr!.on('data', () => undefined);
  return { child, lines: () => output.split('\n').filter(Boolean) };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  await exited;
}

it('streams the device log live in the syslog line format', async () => {
  const everything = startSyslog();
  // `-p` filters on the process name idevicesyslog parses out of each line: it only works on the real format.
  const shopOnly = startSyslog('-p', 'ExampleShop');
  try {
    await waitFor('device log lines', async () => everything.lines().filter((l) => LINE.test(l)).length >= 2, 10_000);
    await waitFor('the filtered client connected', async () => shopOnly.lines().some((l) => l.startsWith('[connected')), 10_000);
    world.iosDevice(spec.udid).syslog.log({ process: 'ExampleShop', image: 'CFNetwork', pid: 5678, level: 'Error', message: 'Task <7A1C>.<1> finished with error [-1009]' });
    await waitFor('the logged line', async () => shopOnly.lines().some((l) => l.includes('finished with error [-1009]')), 10_000);
    const deviceLines = shopOnly.lines().filter((l) => !l.startsWith('['));
    expect(deviceLines).toHaveLength(1);
    expect(deviceLines[0]).toMatch(/^\w{3} [ \d]\d \d\d:\d\d:\d\d ExampleShop\(CFNetwork\)\[5678\] <Error>: Task <7A1C>\.<1> finished with error \[-1009\]$/);
  } finally {
    await stop(everything.child);
    await stop(shopOnly.child);
  }
}, 30_000);

it('restarts with idevicediagnostics: Detached, away while booting, Attached again with its pairing', async () => {
  world.iosDevice(spec.udid).rebootMs = 1500;
  const listener = await UsbmuxListener.open(world);
  const syslog = startSyslog();
  try {
    await waitFor('idevicesyslog connected', async () => syslog.lines().some((l) => l.startsWith('[connected')), 10_000);
    const restart = await run('idevicediagnostics', 'restart');
    expect(restart).toEqual(expect.objectContaining({ code: 0, stdout: 'Restarting device.\n' }));
    await waitFor('Detached', async () => listener.events(spec.udid).join() === 'Attached,Detached', 5_000, 50);
    expect(world.iosDevices()[0].power).toBe('rebooting');
    expect((await run('idevice_id', '-l')).stdout).toBe('');
    await waitFor('Attached again', async () => listener.events(spec.udid).join() === 'Attached,Detached,Attached', 10_000, 100);
    expect((await run('idevice_id', '-l')).stdout).toBe(`${spec.udid}\n`);
    expect(await run('ideviceinfo', '-k', 'ProductVersion')).toEqual(expect.objectContaining({ code: 0, stdout: '17.4.1\n' }));
    await waitFor('idevicesyslog reconnected', async () => syslog.lines().filter((l) => l.startsWith('[connected')).length === 2, 10_000);
    expect(syslog.lines()).toContain('[disconnected]');
  } finally {
    listener.close();
    await stop(syslog.child);
  }
}, 40_000);
