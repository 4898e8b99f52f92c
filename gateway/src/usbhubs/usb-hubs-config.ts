/**
 * USB hub configuration of a gateway, from the environment (README "USB hubs"):
 *   DEVICELAB_CAMBRIONIX            serial paths of Cambrionix hubs, comma separated; `path@1-1.4` adds the
 *                                   hub's USB location (devices at `1-1.4.<port>` map to that port)
 *   DEVICELAB_CAMBRIONIX_SCAN       `1`: also every `/dev/serial/by-id/*cambrionix*` (or a directory to scan)
 *   DEVICELAB_UHUBCTL_HUBS          USB locations of plain hubs switched by uhubctl (`1-1.4,2-1`)
 *   DEVICELAB_UHUBCTL_BIN           uhubctl binary (default `uhubctl`)
 *   DEVICELAB_USB_PORT_MAP          `<hub serial>:<port>=<device serial>,...` (wins over USB locations)
 *   DEVICELAB_USB_POLL_MS           hub status poll, also unplug detection (default 2000)
 *   DEVICELAB_USB_TELEMETRY_SECONDS usb_hub metrics interval (default 60; 0 = off)
 *   DEVICELAB_BATTERY_CARE          `1` turns battery care on; DEVICELAB_BATTERY_LOW / _HIGH (percent, 20 / 80),
 *                                   DEVICELAB_BATTERY_MAX_TEMP_C (40), DEVICELAB_BATTERY_CHARGE_CHECK_MINUTES (20)
 *   DEVICELAB_USB_RECOVERY          `1` turns power-cycle recovery on; DEVICELAB_USB_RECOVERY_AFTER_SECONDS (120)
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_BATTERY_CARE, type BatteryCareOptions } from './battery-care';
import { parsePortMap, type ConfiguredPort } from './port-mapping';
import { DEFAULT_RECOVERY, type RecoveryOptions } from './power-cycle-recovery';

export interface CambrionixConfig {
  path: string;
  /** The hub's own USB location, for mapping devices by theirs. */
  usbLocation?: string;
}

export interface UsbHubsConfig {
  cambrionix: CambrionixConfig[];
  uhubctl: string[];
  uhubctlBin?: string;
  portMap: ConfiguredPort[];
  pollIntervalMs: number;
  /** 0 turns telemetry off. */
  telemetryIntervalMs: number;
  batteryCare: BatteryCareOptions | false;
  recovery: RecoveryOptions | false;
  /** Serial timings (tests use short ones). */
  commandTimeoutMs?: number;
  reopenDelayMs?: number;
}

const SERIAL_BY_ID = '/dev/serial/by-id';

/** Cambrionix hubs among the stable serial names (the FTDI product string names the vendor). */
export function scanSerialById(dir = SERIAL_BY_ID): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((name) => /cambrionix/i.test(name)).sort().map((name) => path.join(dir, name));
}

export function usbHubsConfigFromEnv(env: NodeJS.ProcessEnv): UsbHubsConfig {
  const list = (key: string) => (env[key] ?? '').split(',').map((item) => item.trim()).filter(Boolean);
  const number = (key: string, fallback: number) => {
    const text = env[key]?.trim();
    if (!text) return fallback;
    const value = Number(text);
    if (!Number.isFinite(value) || value < 0) throw new Error(`${key} must be a non-negative number, got '${text}'`);
    return value;
  };
  const cambrionix: CambrionixConfig[] = list('DEVICELAB_CAMBRIONIX').map((entry) => {
    const at = entry.lastIndexOf('@');
    return at > 0 ? { path: entry.slice(0, at), usbLocation: entry.slice(at + 1) } : { path: entry };
  });
  const scan = env.DEVICELAB_CAMBRIONIX_SCAN?.trim();
  if (scan && scan !== '0') {
    for (const found of scanSerialById(scan === '1' ? SERIAL_BY_ID : scan)) {
      if (!cambrionix.some((hub) => hub.path === found)) cambrionix.push({ path: found });
    }
  }
  const battery = DEFAULT_BATTERY_CARE;
  const batteryCare: BatteryCareOptions = {
    ...battery,
    lowPercent: number('DEVICELAB_BATTERY_LOW', battery.lowPercent),
    highPercent: number('DEVICELAB_BATTERY_HIGH', battery.highPercent),
    maxTemperatureC: number('DEVICELAB_BATTERY_MAX_TEMP_C', battery.maxTemperatureC),
    chargeCheckMs: number('DEVICELAB_BATTERY_CHARGE_CHECK_MINUTES', battery.chargeCheckMs / 60_000) * 60_000,
  };
  if (batteryCare.lowPercent >= batteryCare.highPercent) {
    throw new Error('DEVICELAB_BATTERY_LOW must be below DEVICELAB_BATTERY_HIGH');
  }
  return {
    cambrionix,
    uhubctl: list('DEVICELAB_UHUBCTL_HUBS'),
    uhubctlBin: env.DEVICELAB_UHUBCTL_BIN || undefined,
    portMap: parsePortMap(env.DEVICELAB_USB_PORT_MAP),
    pollIntervalMs: number('DEVICELAB_USB_POLL_MS', 2_000),
    telemetryIntervalMs: number('DEVICELAB_USB_TELEMETRY_SECONDS', 60) * 1000,
    batteryCare: env.DEVICELAB_BATTERY_CARE === '1' ? batteryCare : false,
    recovery: env.DEVICELAB_USB_RECOVERY === '1'
      ? { ...DEFAULT_RECOVERY, afterMs: number('DEVICELAB_USB_RECOVERY_AFTER_SECONDS', DEFAULT_RECOVERY.afterMs / 1000) * 1000 }
      : false,
  };
}
