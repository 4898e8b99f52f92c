/**
 * The in-process device shell prints what the real /bin/sh with the tool scripts prints (same bytes, same exit
 * status), for the command lines the gateway sends and for the shell forms it covers; lines it does not cover
 * fall back to the real shell.
 */
import type { ChildProcess } from 'node:child_process';
import { LabWorld, SimAndroidDevice, specFromPreset } from '../src';
import { FACTS_SCRIPT } from '../../gateway/src/drivers/android/facts';
import { PACKAGE_LIST_SCRIPT, versionScript } from '../../gateway/src/drivers/android/installed-packages';
import { sampleScript } from '../../gateway/src/drivers/android/sampling';
import { adbOn, startWorld } from './helpers';

interface Run { out: string; err: string; status: number }

async function inProcess(device: SimAndroidDevice, command: string): Promise<Run | null> {
  let out = '';
  let err = '';
  const run = device.runShellInProcess(command, { out: (d) => (out += d), err: (d) => (err += d), gone: new Promise(() => undefined) });
  if (!run) return null;
  const status = await run;
  return { out, err, status };
}

async function realShell(device: SimAndroidDevice, command: string): Promise<Run> {
  const child: ChildProcess = device.spawnShell(command);
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (err += d));
  const status = await new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? 255)));
  return { out, err, status };
}

describe('in-process device shell', () => {
  let world: LabWorld;
  let device: SimAndroidDevice;
  let serial: string;

  beforeAll(async () => {
    world = await startWorld();
    serial = (await world.addAndroidDevice(specFromPreset('pixel-7', 0))).adbSerial;
    device = world.device(serial);
  });
  afterAll(() => world?.stop());

  const sameAsRealShell = [
    'getprop ro.product.model',
    'getprop no.such.prop fallback',
    'echo @@a; pm list packages -f --show-versioncode 2>/dev/null; echo @@b; true',
    "dumpsys package com.android.chrome 2>/dev/null | grep -E 'versionName=|versionCode=|^Hidden system packages:'",
    'cat /proc/nope 2>/dev/null || cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq',
    'cat /sys/devices/system/cpu/cpufreq/policy*/scaling_cur_freq',
    'echo one >&2; echo two 2>&1; false && echo never || echo after',
    'pm path com.nope; echo status-follows; exit 3',
    'getprop | grep -v boot | head -n 3; getprop | tail -2 | wc -l',
    'settings get global device_name; wm size; wm density',
    "echo 'single quoted; not a separator' \"double \\\"quoted\\\"\" plain\\ word",
  ];
  test.each(sameAsRealShell)('%s', async (command) => {
    const own = await inProcess(device, command);
    expect(own).not.toBeNull();
    expect(own).toEqual(await realShell(device, command));
  });

  test('errors name the device path (the real shell leaks the host sandbox path there), status and output agree', async () => {
    for (const [command, message] of [
      ['rm /data/local/tmp/nothing-here; rm -f /data/local/tmp/nothing-here; echo done', 'rm: /data/local/tmp/nothing-here: No such file or directory\n'],
      ['grep -q Pixel /proc/nope; echo', 'grep: /proc/nope: No such file or directory\n'],
    ]) {
      const own = await inProcess(device, command);
      const real = await realShell(device, command);
      expect(own).toEqual({ out: real.out, status: real.status, err: message });
    }
  });

  test('every command line the gateway sends runs in process', () => {
    for (const command of [FACTS_SCRIPT, PACKAGE_LIST_SCRIPT, versionScript(['com.example.app']), sampleScript(undefined), sampleScript('com.example.app'), 'getprop sys.boot_completed', 'logcat -v threadtime -T 1']) {
      expect({ command, planned: device.runShellInProcess(command, { out: () => undefined, err: () => undefined, gone: Promise.resolve() }) !== null }).toEqual({ command, planned: true });
    }
  });

  test('shell syntax outside the subset still runs in the real shell', async () => {
    for (const command of ['echo $((1 + 2))', 'for i in 1 2; do echo $i; done', 'tr a-z A-Z </dev/null', 'echo x > /data/local/tmp/f', 'sleep 0 &']) {
      expect(device.runShellInProcess(command, { out: () => undefined, err: () => undefined, gone: Promise.resolve() })).toBeNull();
    }
    const adb = adbOn(world, serial);
    expect(await adb('shell', 'echo $((1 + 2))')).toEqual({ stdout: '3\n', stderr: '', code: 0 });
  });

  test('df /data prints a toybox table the facts parser reads, with the sandbox file system sizes', async () => {
    const own = await inProcess(device, 'df /data');
    const [header, row] = own!.out.trimEnd().split('\n');
    expect(header).toMatch(/^Filesystem\s+1K-blocks\s+Used\s+Available\s+Use% Mounted on$/);
    const f = row.split(/\s+/);
    expect(f[f.length - 1]).toBe('/data');
    expect(Number(f[1])).toBeGreaterThan(Number(f[3]));
  });
});
