/**
 * The device filter people type (`os=android,minOs=13,model=Pixel,free`): the CLI sends it as it was written, the
 * hub reads it here and matches it against the API's device record, for `GET /Device?filter=` and for everything
 * that waits for a device (the waiting line, which reads the same rules in SQL: `device_matches_filter`, checked to
 * agree by hub/test/domain/line-filter-rules.test.ts). No imports: it is read the same wherever it runs.
 */

export interface DeviceFilter {
  os?: 'Android' | 'iOS';
  minOs?: string;
  maxOs?: string;
  /** Exact version or a dotted prefix of it: `14` takes 14, 14.0.1; `14.1` takes 14.1, 14.1.2 but not 14.10. */
  osVersion?: string;
  /** Substring of model, friendly model or manufacturer, any letter case. */
  model?: string;
  /** Substring of the device name, any letter case. */
  name?: string;
  /** Guid, serial number or vendor unique id (exact, any letter case). */
  id?: string;
  formFactor?: string;
  /** A package name / bundle id installed on the device. */
  app?: string;
  /** Only devices nobody retains and that could be retained now (online, enabled). */
  free?: boolean;
  online?: boolean;
  /** The filter as the user wrote it, for messages. */
  text: string;
}

/** The fields of the API's device record (spec 2.3) a filter reads. */
export interface FilterableDevice {
  id: string;
  name?: string;
  availability?: string;
  enabled?: boolean;
  deleted?: boolean;
  retainedById?: string;
  model?: string;
  friendlyModel?: string;
  manufacturer?: string;
  operatingSystem?: string;
  operatingSystemVersion?: string;
  serialNumber?: string;
  vendorUniqueIdentifier?: string;
  formFactor?: string;
  installedApplications?: { applicationIdentifier: string }[];
}

export const DEVICE_FILTER_KEYS = 'os=android|ios, minOs=13, maxOs=14, osVersion=14.1, model=<text>, name=<text>, '
  + 'id=<serial|guid>, formFactor=phone|tablet, app=<package>, free, online';

/** The longest filter text read; longer is refused. */
export const MAX_DEVICE_FILTER_LENGTH = 1000;

/** A filter that cannot be read; the message says what to write instead. */
export class DeviceFilterError extends Error {
  override readonly name = 'DeviceFilterError';
}

const BOOLEAN_KEYS = new Set(['free', 'online']);
const VERSION = /^\d+(\.\d+)*$/;

/** Reads a filter: comma separated `key=value` parts; `free` and `online` may stand alone. Empty: every device. */
export function parseDeviceFilter(text: string): DeviceFilter {
  if (text.length > MAX_DEVICE_FILTER_LENGTH) {
    throw new DeviceFilterError(`The filter is longer than ${MAX_DEVICE_FILTER_LENGTH} characters.`);
  }
  const filter: DeviceFilter = { text: text.trim() };
  for (const part of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const eq = part.indexOf('=');
    const key = (eq < 0 ? part : part.slice(0, eq)).trim().toLowerCase();
    const value = eq < 0 ? undefined : part.slice(eq + 1).trim();
    if (BOOLEAN_KEYS.has(key)) {
      if (value !== undefined && !/^(true|false|yes|no|1|0)$/i.test(value)) {
        throw new DeviceFilterError(`Filter '${key}=${value}': use ${key} or ${key}=false.`);
      }
      const flag = value === undefined || /^(true|yes|1)$/i.test(value);
      if (key === 'free') filter.free = flag;
      else filter.online = flag;
      continue;
    }
    if (!value) throw new DeviceFilterError(`Filter '${part}' needs a value (${key}=...). Filters: ${DEVICE_FILTER_KEYS}.`);
    switch (key) {
      case 'os': case 'platform': {
        const os = value.toLowerCase();
        if (os !== 'android' && os !== 'ios') throw new DeviceFilterError(`Filter 'os=${value}': use os=android or os=ios.`);
        filter.os = os === 'android' ? 'Android' : 'iOS';
        break;
      }
      case 'minos': case 'maxos': case 'osversion':
        if (!VERSION.test(value)) throw new DeviceFilterError(`Filter '${key}=${value}': give a version such as 13 or 16.4.`);
        if (key === 'minos') filter.minOs = value;
        else if (key === 'maxos') filter.maxOs = value;
        else filter.osVersion = value;
        break;
      case 'model': filter.model = value; break;
      case 'name': filter.name = value; break;
      case 'id': case 'serial': filter.id = value; break;
      case 'formfactor': filter.formFactor = value; break;
      case 'app': case 'bundle': filter.app = value; break;
      default:
        throw new DeviceFilterError(`Unknown filter '${key}'. Filters: ${DEVICE_FILTER_KEYS}.`);
    }
  }
  return filter;
}

/** Dotted versions compared number by number; a missing part is 0 (13 == 13.0). */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.\-_ ]/).map((part) => Number.parseInt(part, 10) || 0);
  const pb = b.split(/[.\-_ ]/).map((part) => Number.parseInt(part, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const diff = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (diff) return Math.sign(diff);
  }
  return 0;
}

/** Whether `version` is `prefix` or starts with it part by part (`14.1` is a prefix of 14.1.2, not of 14.10). */
function versionHasPrefix(version: string, prefix: string): boolean {
  const parts = version.split('.');
  const wanted = prefix.split('.');
  return wanted.every((part, i) => parts[i] !== undefined && Number.parseInt(parts[i], 10) === Number.parseInt(part, 10));
}

/** Free: what a retain could get now (online, enabled, not deleted, retained by nobody). */
export function isFreeDevice(device: FilterableDevice): boolean {
  return device.availability === 'Online' && device.enabled !== false && !device.deleted && !device.retainedById;
}

/** Whether a device matches the filter; deleted devices never do; `maxOs=14` takes every 14.x. */
export function matchesDeviceFilter(filter: DeviceFilter, device: FilterableDevice): boolean {
  const has = (field: string | undefined, text: string) => (field ?? '').toLowerCase().includes(text.toLowerCase());
  const version = device.operatingSystemVersion ?? '';
  if (device.deleted) return false;
  if (filter.os && device.operatingSystem !== filter.os) return false;
  if (filter.minOs && (!version || compareVersions(version, filter.minOs) < 0)) return false;
  if (filter.maxOs && (!version || compareVersions(version.split('.').slice(0, filter.maxOs.split('.').length).join('.'), filter.maxOs) > 0)) return false;
  if (filter.osVersion && !versionHasPrefix(version, filter.osVersion)) return false;
  if (filter.model && !has(device.model, filter.model) && !has(device.friendlyModel, filter.model) && !has(device.manufacturer, filter.model)) return false;
  if (filter.name && !has(device.name, filter.name)) return false;
  if (filter.id && ![device.id, device.serialNumber, device.vendorUniqueIdentifier].some((v) => v?.toLowerCase() === filter.id!.toLowerCase())) return false;
  if (filter.formFactor && (device.formFactor ?? '').toLowerCase() !== filter.formFactor.toLowerCase()) return false;
  if (filter.app && !(device.installedApplications ?? []).some((a) => a.applicationIdentifier === filter.app)) return false;
  if (filter.online !== undefined && (device.availability === 'Online') !== filter.online) return false;
  if (filter.free !== undefined && isFreeDevice(device) !== filter.free) return false;
  return true;
}
