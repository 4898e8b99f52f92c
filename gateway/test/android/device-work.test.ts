/**
 * Bounded device work: shell commands wait for a slot (per device and per gateway), a command that times out is
 * cancelled on the device and gives its slot back, and the next command runs.
 */
import { specFromPreset } from '@devicelab/labsim';
import { Admission } from '../../src/drivers/admission';
import { batchScript } from '../../src/drivers/android/parsers/text';
import { runBatch, runShell } from '../../src/drivers/android/shell';
import { startDriverLab, type DriverLab } from '../support/driver-lab';
import { eventually } from '../support/eventually';

describe('Admission', () => {
  it('runs at most perDevice per key and total overall, the rest in arrival order', async () => {
    const admission = new Admission({ perDevice: 2, total: 3 });
    const started: string[] = [];
    const gates: Array<() => void> = [];
    const job = (name: string) => () => new Promise<void>((resolve) => { started.push(name); gates.push(resolve); });
    const all = [
      admission.run('a', job('a1')), admission.run('a', job('a2')), admission.run('a', job('a3')),
      admission.run('b', job('b1')), admission.run('b', job('b2')),
    ];
    await new Promise((r) => setImmediate(r));
    // a3 waits for a's second slot; b1 takes the last gateway slot; b2 waits for a gateway slot.
    expect(started).toEqual(['a1', 'a2', 'b1']);
    expect({ active: admission.active, queued: admission.queued }).toEqual({ active: 3, queued: 2 });
    gates[0]();
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(['a1', 'a2', 'b1', 'a3']);
    while (gates.length < 5) {
      gates.forEach((g) => g());
      await new Promise((r) => setImmediate(r));
    }
    gates.forEach((g) => g());
    await Promise.all(all);
    expect({ active: admission.active, queued: admission.queued }).toEqual({ active: 0, queued: 0 });
  });
});

describe('shell commands under admission control', () => {
  let lab: DriverLab;
  let serial: string;

  beforeAll(async () => {
    lab = await startDriverLab();
    serial = (await lab.world.addAndroidDevice(specFromPreset('pixel-7', 0))).adbSerial;
    await lab.recorder.waitReadiness(serial, 'Ready');
  });
  afterAll(() => lab?.stop());

  it('a command that times out is stopped on the device and frees its slot; the next one runs', async () => {
    const device = lab.driver.client.getDevice(serial);
    const marker = `/data/local/tmp/slow-${process.pid}`;
    // The device runs this loop until its stream closes.
    const slow = runShell(device, `while true; do echo tick >> ${marker}; sleep 0.2; done`, 800);
    await expect(slow).rejects.toMatchObject({ code: 'DEVICE_TIMEOUT' });
    await eventually(() => lab.driver.admission.active === 0);
    const size = async () => (await runShell(device, `wc -l ${marker}`, 5_000)).trim();
    const first = await size();
    await new Promise((r) => setTimeout(r, 700));
    // The loop was killed with its stream: the file no longer grows.
    expect(await size()).toBe(first);
    expect(await runShell(device, 'getprop ro.product.model', 5_000)).toBe('Pixel 7\n');
  });

  it('many commands for one device at once: the per-device limit runs, the rest wait, all answer', async () => {
    const device = lab.driver.client.getDevice(serial);
    const commands = Array.from({ length: 30 }, () => runShell(device, 'getprop ro.product.model', 10_000));
    const { perDevice } = lab.driver.admission.limits;
    expect({ active: lab.driver.admission.active, queued: lab.driver.admission.queued }).toEqual({ active: perDevice, queued: 30 - perDevice });
    expect(new Set(await Promise.all(commands))).toEqual(new Set(['Pixel 7\n']));
    expect(lab.driver.admission.active).toBe(0);
  });

  it('a batch cut short by the device going away fails; its first sections never pass for the whole output', async () => {
    const device = lab.driver.client.getDevice(serial);
    const script = batchScript({ first: 'echo one', slow: 'sleep 3', end: 'true' });
    expect(await runBatch(device, script.replace('sleep 3', 'true'), 'test output', 5_000)).toEqual(new Map([['first', 'one'], ['slow', ''], ['end', '']]));
    const cut = runBatch(device, script, 'test output', 10_000);
    await new Promise((r) => setTimeout(r, 500));
    await lab.world.unplug(serial);
    await expect(cut).rejects.toMatchObject({ code: 'DEVICE_UNREACHABLE' });
    await lab.world.plug(serial);
    await lab.recorder.waitReadiness(serial, 'Ready');
  });
});
