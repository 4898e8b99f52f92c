/**
 * A labsim world (fast reboots) behind its own adb server, and our AndroidDriver tracking it, reporting to a
 * Recorder and, when `listen` gives one, to one more listener. adbkit may (re)start the adb server, so HOME
 * points at the world's (its adb key) while the lab runs; `stop()` stops the driver before the world and
 * puts HOME back.
 */
import { LabWorld } from '@devicelab/labsim';
import { createLogger, type Logger } from '@devicelab/shared';
import { AndroidDriver } from '../../src/drivers/android/android-driver';
import type { DeviceListener } from '../../src/drivers/device-driver';
import { Recorder } from './recorder';

export interface DriverLab {
  world: LabWorld;
  driver: AndroidDriver;
  recorder: Recorder;
  stop(): Promise<void>;
}

export async function startDriverLab(options: { logger?: Logger; listen?: (driver: AndroidDriver) => DeviceListener } = {}): Promise<DriverLab> {
  const savedHome = process.env.HOME;
  const world = new LabWorld({ timings: { rebootMs: 800, bootCompleteMs: 700 } });
  await world.start();
  process.env.HOME = world.env().HOME;
  const recorder = new Recorder();
  const driver = new AndroidDriver({
    adbPort: world.adbServerPort, bootPollMs: 150, rebootGraceMs: 400, devicePollMs: 500,
    logger: options.logger ?? createLogger('test', process.env.GW_TEST_LOG ?? 'silent'),
  });
  const also = options.listen?.(driver);
  await driver.start(also ? {
    deviceChanged: (state) => { recorder.deviceChanged(state); also.deviceChanged(state); },
    deviceRemoved: (id) => { recorder.deviceRemoved(id); also.deviceRemoved(id); },
  } : recorder);
  return {
    world, driver, recorder,
    async stop() {
      await driver.stop();
      await world.stop();
      process.env.HOME = savedHome;
    },
  };
}
