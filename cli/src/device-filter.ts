/**
 * `--filter os=android,minOs=13,model=Pixel,free`: which devices a command means. `os` and `app` are sent to the
 * hub; the rest is matched here (the hub's filters are exact, these are what a tester types).
 */
import { usageError } from './errors';
import type { Device } from './models';

export interface DeviceFilter {
  os?: 'Android' | 'iOS';
  minOs?: string;
  maxOs?: string;
  /** Substring of model, friendly model or manufacturer, any letter case. */
  model?: string;
  /** Substring of the device name, any letter case. */
  name?: string;
  /** Guid, serial number or vendor unique id. */
  id?: string;
  formFactor?: string;
  /** A package name / bundle id installed on the device. */
  app?: string;
  /** Only devices the caller could retain now (online, enabled, retained by nobody). */
  free?: boolean;
  online?: boolean;
  /** The filter as the user wrote it, for messages. */
  text: string;
}

export const FILTER_KEYS = 'os=android|ios, minOs=13, maxOs=14, model=<text>, name=<text>, id=<serial|guid>, '
  + 'formFactor=phone|tablet, app=<package>, free, online';

const BOOLEAN_KEYS = new Set(['free', 'online']);

/** Reads one or more `--filter` values (comma separated `key=value`; `free` and `online` stand alone). */
export function parseFilter(values: string[] | undefined): DeviceFilter {
  const filter: DeviceFilter = { text: (values ?? []).join(',') };
  for (const part of (values ?? []).flatMap((value) => value.split(',')).map((p) => p.trim()).filter(Boolean)) {
    const eq = part.indexOf('=');
    const key = (eq < 0 ? part : part.slice(0, eq)).trim().toLowerCase();
    const value = eq < 0 ? undefined : part.slice(eq + 1).trim();
    if (BOOLEAN_KEYS.has(key)) {
      const flag = value === undefined || /^(true|yes|1)$/i.test(value);
      if (value !== undefined && !/^(true|false|yes|no|1|0)$/i.test(value)) throw usageError(`--filter ${key}=${value}: use ${key} or ${key}=false.`);
      if (key === 'free') filter.free = flag;
      else filter.online = flag;
      continue;
    }
    if (!value) throw usageError(`--filter '${part}' needs a value (${key}=...). Filters: ${FILTER_KEYS}.`);
    switch (key) {
      case 'os': case 'platform': {
        const os = value.toLowerCase();
        if (os !== 'android' && os !== 'ios') throw usageError(`--filter os=${value}: use os=android or os=ios.`);
        filter.os = os === 'android' ? 'Android' : 'iOS';
        break;
      }
      case 'minos': case 'maxos':
        if (!/^\d+(\.\d+)*$/.test(value)) throw usageError(`--filter ${key}=${value}: give a version such as 13 or 16.4.`);
        if (key === 'minos') filter.minOs = value;
        else filter.maxOs = value;
        break;
      case 'model': filter.model = value; break;
      case 'name': filter.name = value; break;
      case 'id': case 'serial': filter.id = value; break;
      case 'formfactor': filter.formFactor = value; break;
      case 'app': case 'bundle': filter.app = value; break;
      default:
        throw usageError(`Unknown filter '${key}'. Filters: ${FILTER_KEYS}.`);
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

/** Whether a device matches the filter; `maxOs=14` takes every 14.x. */
export function matches(device: Device, filter: DeviceFilter): boolean {
  const has = (field: string | undefined, text: string) => (field ?? '').toLowerCase().includes(text.toLowerCase());
  const version = device.operatingSystemVersion ?? '';
  if (filter.os && device.operatingSystem !== filter.os) return false;
  if (filter.minOs && (!version || compareVersions(version, filter.minOs) < 0)) return false;
  if (filter.maxOs && (!version || compareVersions(version.split('.').slice(0, filter.maxOs.split('.').length).join('.'), filter.maxOs) > 0)) return false;
  if (filter.model && !has(device.model, filter.model) && !has(device.friendlyModel, filter.model) && !has(device.manufacturer, filter.model)) return false;
  if (filter.name && !has(device.name, filter.name)) return false;
  if (filter.id && ![device.id, device.serialNumber, device.vendorUniqueIdentifier].some((v) => v?.toLowerCase() === filter.id!.toLowerCase())) return false;
  if (filter.formFactor && (device.formFactor ?? '').toLowerCase() !== filter.formFactor.toLowerCase()) return false;
  if (filter.online !== undefined && (device.availability === 'Online') !== filter.online) return false;
  if (filter.free !== undefined && isFree(device) !== filter.free) return false;
  return !device.deleted;
}

export function isFree(device: Device): boolean {
  return device.availability === 'Online' && device.enabled !== false && !device.deleted && !device.retainedById;
}

/** The part of a filter the hub matches itself (exact values). */
export function hubQuery(filter: DeviceFilter): Record<string, string | undefined> {
  return { operatingSystem: filter.os, BundleInstalled: filter.app };
}
