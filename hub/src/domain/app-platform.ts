/**
 * An iOS binary runs only on the platform it was built for: a device build (`iphoneos`) cannot be installed on
 * an iOS Simulator, nor a simulator build (`iphonesimulator`) on a phone. The gateway reports a simulator with
 * the device property `Simulator` = `true`; binaries uploaded before the platform was recorded are not checked.
 */
import { ApiFailure } from '@devicelab/shared';
import type { ApplicationRow, DevicePropertyValue } from '../store/schema';

export const wrongPlatform = {
  deviceBuildOnSimulator: (app: string) =>
    `Application '${app}' is built for iOS devices (iphoneos) and cannot be installed on an iOS Simulator; upload a simulator build (a zipped .app or an IPA built for iphonesimulator).`,
  simulatorBuildOnDevice: (app: string) =>
    `Application '${app}' is built for the iOS Simulator (iphonesimulator) and cannot be installed on a device; upload a device build (an IPA built for iphoneos).`,
};

export function isSimulator(properties: readonly DevicePropertyValue[]): boolean {
  return properties.some((p) => p.name === 'Simulator' && p.value.toLowerCase() === 'true');
}

/** Fails when the app's recorded platform does not fit the device (nothing is sent to the gateway then). */
export function assertPlatformFits(app: Pick<ApplicationRow, 'platform' | 'display_name'>, device: { properties: readonly DevicePropertyValue[] }): void {
  if (!app.platform) return;
  const simulator = isSimulator(device.properties);
  if (simulator && app.platform !== 'iphonesimulator') throw new ApiFailure(wrongPlatform.deviceBuildOnSimulator(app.display_name), 'APP_WRONG_PLATFORM');
  if (!simulator && app.platform === 'iphonesimulator') throw new ApiFailure(wrongPlatform.simulatorBuildOnDevice(app.display_name), 'APP_WRONG_PLATFORM');
}
