/**
 * `simctl list -j` as the driver reads it (Xcode 15/16 keys): devices grouped by runtime identifier, runtimes
 * with version and build, device types with product family and model identifier.
 */
export interface ListedDevice {
  udid: string;
  name: string;
  state: string;
  isAvailable?: boolean;
  deviceTypeIdentifier?: string;
  dataPathSize?: number;
  runtimeIdentifier: string;
}

export interface ListedRuntime {
  identifier: string;
  name: string;
  version: string;
  buildversion?: string;
  platform?: string;
  isAvailable?: boolean;
}

export interface ListedDeviceType {
  identifier: string;
  name: string;
  productFamily?: string;
  modelIdentifier?: string;
}

export interface SimulatorListing {
  devices: ListedDevice[];
  runtimes: ListedRuntime[];
  deviceTypes: ListedDeviceType[];
}

export function readListing(json: unknown): SimulatorListing {
  const root = (json ?? {}) as { devices?: Record<string, unknown[]>; runtimes?: unknown[]; devicetypes?: unknown[] };
  const devices: ListedDevice[] = [];
  for (const [runtimeIdentifier, entries] of Object.entries(root.devices ?? {})) {
    if (!Array.isArray(entries)) continue;
    for (const entry of entries as Array<Partial<ListedDevice>>) {
      if (typeof entry.udid === 'string' && typeof entry.name === 'string') {
        devices.push({ ...entry, udid: entry.udid, name: entry.name, state: String(entry.state ?? 'Unknown'), runtimeIdentifier });
      }
    }
  }
  const runtimes = (root.runtimes ?? []).filter((r): r is ListedRuntime =>
    typeof (r as ListedRuntime).identifier === 'string' && typeof (r as ListedRuntime).version === 'string');
  const deviceTypes = (root.devicetypes ?? []).filter((t): t is ListedDeviceType =>
    typeof (t as ListedDeviceType).identifier === 'string' && typeof (t as ListedDeviceType).name === 'string');
  return { devices, runtimes, deviceTypes };
}

/** The runtime an offer names: same platform, same major.minor (`17.5` matches a runtime of version 17.5.1). */
export function findRuntime(runtimes: ListedRuntime[], platform: string, version: string): ListedRuntime | undefined {
  const majorMinor = (v: string) => v.split('.').slice(0, 2).map(Number).join('.');
  return runtimes.find((r) => r.isAvailable !== false && r.version === version && (r.platform ?? r.name).toLowerCase().startsWith(platform.toLowerCase()))
    ?? runtimes.find((r) => r.isAvailable !== false && majorMinor(r.version) === majorMinor(version)
      && (r.platform ?? r.name).toLowerCase().startsWith(platform.toLowerCase()));
}
