/** Shared test helpers: a private LabWorld per test file, driven through the real adb CLI. */
import { LabWorld, LabWorldOptions, specFromPreset, type SimAndroidDevice } from '../src';
import type { AdbResult } from '../src/util/adb-cli';

export { FIXTURES_DIR as FIXTURES } from '../../scripts/jest/shared-files';

export async function startWorld(options: LabWorldOptions = {}): Promise<LabWorld> {
  const world = new LabWorld(options);
  await world.start();
  return world;
}

/** A world with one simulated Pixel 7, and `adb` pointed at it. */
export async function startOnePixel7(): Promise<{ world: LabWorld; device: SimAndroidDevice; adb: ReturnType<typeof adbOn> }> {
  const world = await startWorld();
  const spec = specFromPreset('pixel-7', 0);
  await world.addAndroidDevice(spec);
  const device = world.device(spec.serial);
  return { world, device, adb: adbOn(world, device.adbSerial) };
}

/** `adb -P <port> -s <serial> ...` against the world's private server. */
export function adbOn(world: LabWorld, serial: string) {
  return (...args: string[]): Promise<AdbResult> => world.adbCli.run(['-s', serial, ...args]);
}

export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 15_000, stepMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
