/**
 * A labsim world with one iPhone/iPad behind its simulated usbmuxd (fast reboots), and our IosDriver tracking it,
 * reporting to a Recorder. `pair` pairs the host first (idevicepair) and waits until the driver has it Ready.
 */
import { LabWorld, type AddIosDeviceOptions, type IosDeviceSpec } from '@devicelab/labsim';
import { createLogger } from '@devicelab/shared';
import { IosDriver } from '../../src/drivers/ios/ios-driver';
import { Recorder } from './recorder';

export interface IosLab {
  world: LabWorld;
  driver: IosDriver;
  recorder: Recorder;
  stop(): Promise<void>;
}

export async function startIosLab(spec: IosDeviceSpec, options: AddIosDeviceOptions & { pair?: boolean } = {}): Promise<IosLab> {
  const world = new LabWorld({ timings: { rebootMs: 800, bootCompleteMs: 300 } });
  await world.start();
  await world.addIosDevice(spec, { usbPath: options.usbPath });
  if (options.pair) await world.iosFleet.pairWithIdevicepair(spec.udid);
  const recorder = new Recorder();
  const driver = new IosDriver({
    usbmuxdAddress: world.env().USBMUXD_SOCKET_ADDRESS, usbSysfsDir: world.iosFleet.usbSysfsDir, relistenMs: 200,
    logger: createLogger('test', process.env.GW_TEST_LOG ?? 'silent'),
  });
  await driver.start(recorder);
  if (options.pair) {
    await recorder.waitFor((e) => e.type === 'changed' && e.state.vendorUniqueIdentifier === spec.udid && e.state.readiness === 'Ready', 20_000);
  }
  return {
    world, driver, recorder,
    async stop() {
      await driver.stop();
      await world.stop();
    },
  };
}
