/**
 * The simulated Cambrionix hub in the lab world, spoken to through its pseudo-terminal: `mode o 3` unplugs the
 * simulated Android device on port 3 from adb and `mode s 3` plugs it back; Charge powers it without data;
 * the current model (attached and charging draws, a full battery only trickles); reboot drops the tty and
 * comes back with `R` set until `crf`.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { LabWorld, specFromPreset, type SimCambrionixHub } from '../src';
import { CliSession } from '../../gateway/src/usbhubs/cambrionix/cli-session';

let world: LabWorld;
let hub: SimCambrionixHub;
let cli: CliSession;
const spec = specFromPreset('pixel-7', 3);

beforeAll(async () => {
  world = new LabWorld();
  await world.start();
  await world.addAndroidDevice(spec);
  hub = await world.addCambrionixHub({ serial: 'SIMHUB', ports: 8, path: path.join(world.env().HOME ?? '/tmp', 'ttySIMHUB'), rebootMs: 300 },
    { 3: spec.serial });
  cli = await CliSession.open({ path: hub.path });
}, 60_000);

afterAll(async () => {
  await cli?.close();
  await world?.stop();
}, 60_000);

const port3 = async () => (await cli.command('state 3'))[0];

it('unplugs the device on `mode o 3` and plugs it back on `mode s 3`', async () => {
  expect(await world.adbState(spec.serial)).toBe('device');
  expect(await port3()).toBe(' 3, 0430, A S, 0, 0, x, 0.00');
  expect(await cli.command('mode o 3')).toEqual([]);
  await world.waitForState(spec.serial, ['absent'], 5_000);
  expect(await port3()).toBe(' 3, 0000, D O, 0, 0, x, 0.00');
  expect(world.device(spec.serial).battery.get().usbPowered).toBe(false);
  expect(await cli.command('mode s 3')).toEqual([]);
  await world.waitForState(spec.serial, ['device'], 10_000);
  expect(world.device(spec.serial).battery.get().usbPowered).toBe(true);
}, 30_000);

it('charges without a data link, drawing current that tapers as the battery fills', async () => {
  await world.setBattery(spec.serial, { level: 50 });
  await cli.command('mode c 3');
  await world.waitForState(spec.serial, ['absent'], 5_000);
  expect(world.device(spec.serial).battery.get().usbPowered).toBe(true);
  expect(await port3()).toMatch(/^ 3, 1950, A C, 0, \d+, x, 0\.00$/);
  await world.setBattery(spec.serial, { level: 90 });
  expect(await port3()).toMatch(/^ 3, 1100, A C, /);
  await world.setBattery(spec.serial, { level: 100 });
  expect(await port3()).toMatch(/^ 3, 0035, A F, /);
  expect((await cli.command('state 4'))[0]).toBe(' 4, 0000, D S, 0, 0, x, 0.00');
  await cli.command('mode s');
  await world.waitForState(spec.serial, ['device'], 10_000);
}, 30_000);

it('answers errors as *Ennn lines', async () => {
  await expect(cli.command('mode q 3')).rejects.toThrow('E421: Invalid mode. Expected: c (charge), s (sync), b (biassed), or o (off)');
  await expect(cli.command('mode c 9')).rejects.toThrow('E410: Port number must be 1..8');
  await expect(cli.command('mode c 3 7')).rejects.toThrow('E422');
});

it('drops the tty on reboot and comes back with every port reset and R set until crf', async () => {
  await cli.command('mode o 5');
  await cli.sendWithoutAnswer('reboot');
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(existsSync(hub.path)).toBe(false);
  await cli.close();
  const deadline = Date.now() + 5_000;
  while (!existsSync(hub.path) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  cli = await CliSession.open({ path: hub.path });
  expect((await cli.command('state 5'))[0]).toBe(' 5, 0000, R D S, 0, 0, x, 0.00');
  expect(await cli.command('health')).toEqual(expect.arrayContaining(['Rebooted: 1', expect.stringMatching(/^5V Now: +5\.\d\d$/)]));
  await cli.command('crf');
  expect((await cli.command('state 5'))[0]).toBe(' 5, 0000, D S, 0, 0, x, 0.00');
  expect(await cli.command('health')).toContain('Rebooted: 0');
}, 30_000);
