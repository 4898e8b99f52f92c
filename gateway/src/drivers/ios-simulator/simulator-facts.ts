/**
 * What a simulator is, from `simctl list -j`: as for a phone, model and product type are the device type's model
 * identifier (`iPhone15,4`) and the friendly model its name (`iPhone 15`); OS version and build
 * from its runtime, form factor from the device type's product family. `deviceClass` (`iPhone Simulator`) and the
 * `Simulator` property tell the hub it is no phone: device builds cannot be installed on it.
 */
import type { DeviceState } from '@devicelab/proto';
import type { SimulatorListing } from './simctl-list';

export type SimulatorFacts = Omit<DeviceState, 'vendorUniqueIdentifier' | 'operatingSystem' | 'readiness'>;

/** The property the hub reads to know a device is a simulator (shared with the hub's install check). */
export const SIMULATOR_PROPERTY = { name: 'Simulator', value: 'true' } as const;

export function simulatorFacts(udid: string, listing: SimulatorListing): SimulatorFacts | undefined {
  const device = listing.devices.find((d) => d.udid === udid);
  if (!device) return undefined;
  const type = listing.deviceTypes.find((t) => t.identifier === device.deviceTypeIdentifier);
  const runtime = listing.runtimes.find((r) => r.identifier === device.runtimeIdentifier);
  const family = type?.productFamily ?? (type?.name.startsWith('iPad') ? 'iPad' : 'iPhone');
  const name = type?.name ?? device.deviceTypeIdentifier?.replace(/^.*SimDeviceType\./, '') ?? 'Simulator';
  return {
    serialNumber: udid,
    model: type?.modelIdentifier || name,
    manufacturer: 'Apple',
    friendlyModel: name,
    operatingSystemVersion: runtime?.version ?? versionFromIdentifier(device.runtimeIdentifier),
    operatingSystemBuild: runtime?.buildversion ?? '',
    productType: type?.modelIdentifier ?? '',
    deviceClass: `${family} Simulator`,
    formFactor: family === 'iPad' ? 'Tablet' : family === 'iPhone' ? 'Phone' : 'Unknown',
    vendorDeviceName: device.name,
    diskSpaceUsed: device.dataPathSize,
    properties: [{ ...SIMULATOR_PROPERTY }, { name: 'SimulatorRuntime', value: device.runtimeIdentifier }],
  };
}

/** `com.apple.CoreSimulator.SimRuntime.iOS-17-5` -> `17.5`. */
function versionFromIdentifier(identifier: string): string {
  const m = /-(\d+(?:-\d+)*)$/.exec(identifier);
  return m ? m[1].replace(/-/g, '.') : '';
}
