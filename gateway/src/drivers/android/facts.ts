/**
 * Device facts: one batched shell call (getprop, wm, settings, MAC, battery, df) mapped to DeviceState fields
 * per device-data.md 1.1. `factsFromOutput` is pure; `readFacts` runs the batch.
 */
import type { DeviceClient } from '@devicefarmer/adbkit';
import type { DeviceState } from '@devicelab/proto';
import { parseBattery } from './parsers/battery';
import { parseDf } from './parsers/df';
import { parseGetprop, propertyMap } from './parsers/getprop';
import { parseSingleValue } from './parsers/settings';
import { batchScript } from './parsers/text';
import { parseWmDensity, parseWmSize, smallestWidthDp } from './parsers/wm';
import { runBatch } from './shell';

export const FACTS_SCRIPT = batchScript({
  getprop: 'getprop',
  wmsize: 'wm size 2>/dev/null',
  wmdensity: 'wm density 2>/dev/null',
  devicename: 'settings get global device_name 2>/dev/null',
  btaddr: 'settings get secure bluetooth_address 2>/dev/null',
  wlanmac: 'cat /sys/class/net/wlan0/address 2>/dev/null',
  battery: 'dumpsys battery 2>/dev/null',
  df: 'df /data 2>/dev/null',
  end: 'true',
});

/** Everything of DeviceState except readiness and packages. */
export type DeviceFacts = Omit<DeviceState, 'readiness' | 'readinessDetail' | 'packages'>;

/** The facts from the sections of FACTS_SCRIPT's output. */
export function factsFromOutput(serial: string, sections: Map<string, string>): DeviceFacts {
  const section = (name: string) => sections.get(name) ?? '';
  const properties = parseGetprop(section('getprop'));
  const props = propertyMap(properties);
  const prop = (...names: string[]) => {
    for (const name of names) {
      const v = props.get(name)?.trim();
      if (v) return v;
    }
    return undefined;
  };
  const facts: DeviceFacts = {
    vendorUniqueIdentifier: serial,
    operatingSystem: 'Android',
    serialNumber: prop('ro.serialno', 'ro.boot.serialno') ?? serial,
    properties: properties.map((p) => ({ name: p.name, value: p.value })),
  };
  const set = <K extends keyof DeviceFacts>(key: K, value: DeviceFacts[K] | undefined) => {
    if (value !== undefined) facts[key] = value;
  };
  const model = prop('ro.product.model');
  set('model', model);
  set('friendlyModel', prop('ro.product.marketname') ?? model);
  set('manufacturer', prop('ro.product.manufacturer'));
  set('operatingSystemVersion', prop('ro.build.version.release'));
  set('operatingSystemBuild', prop('ro.build.id', 'ro.build.display.id'));
  set('productType', prop('ro.product.device'));
  set('hardwareModel', prop('ro.hardware', 'ro.product.board'));
  const formFactor = deriveFormFactor(prop('ro.build.characteristics'), section('wmsize'), section('wmdensity'));
  facts.formFactor = formFactor;
  facts.deviceClass = formFactor === 'Unknown' ? (prop('ro.build.characteristics') ?? 'Unknown') : formFactor;
  set('vendorDeviceName', parseSingleValue(section('devicename')));
  set('macAddress', normaliseMac(parseSingleValue(section('wlanmac'))));
  set('bluetoothAddress', normaliseMac(parseSingleValue(section('btaddr'))));
  const battery = parseBattery(section('battery'));
  facts.batteryPercent = battery.percent;
  facts.batteryStatus = battery.status;
  const disk = parseDf(section('df'));
  if (disk) {
    facts.diskSpace = disk.diskSpace;
    facts.diskSpaceUsed = disk.diskSpaceUsed;
  }
  return facts;
}

export function deriveFormFactor(characteristics: string | undefined, wmSize: string, wmDensity: string): 'Phone' | 'Tablet' | 'Unknown' {
  if (characteristics?.split(',').map((c) => c.trim()).includes('tablet')) return 'Tablet';
  const size = parseWmSize(wmSize);
  const density = parseWmDensity(wmDensity);
  if (!size || !density) return 'Unknown';
  return smallestWidthDp(size, density) >= 600 ? 'Tablet' : 'Phone';
}

function normaliseMac(value: string | undefined): string | undefined {
  if (!value || !/^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$/.test(value)) return undefined;
  return value.toLowerCase() === '02:00:00:00:00:00' ? undefined : value.toUpperCase();
}

export async function readFacts(device: DeviceClient, timeoutMs?: number): Promise<DeviceFacts> {
  return factsFromOutput(device.serial, await runBatch(device, FACTS_SCRIPT, 'facts', timeoutMs));
}
