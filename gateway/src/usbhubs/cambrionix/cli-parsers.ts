/**
 * Parsers for the Cambrionix CLI's answers (Universal firmware; testbench.md 2.2). Pure functions over the
 * response lines (echo and prompt already removed).
 */
import type { UsbHubDeviceFlags } from '@devicelab/shared';
import type { UsbPortMode, UsbPortStatus } from '../usb-hub-controller';

/** Port flag letters (case-sensitive: `R` rebooted, `r` VBUS reset) to UsbHubDeviceFlags names. */
const FLAG_NAMES: Record<string, UsbHubDeviceFlags> = {
  O: 'Off', S: 'Sync', B: 'Biased', I: 'ChargeIdle', P: 'ChargeProfiling', C: 'ChargeCharging', F: 'ChargeFinished',
  A: 'Attached', D: 'Detached', T: 'Theft', E: 'Errors', R: 'Rebooted', r: 'VBusReset',
};

const CHARGE_FLAGS = new Set<UsbHubDeviceFlags>(['ChargeIdle', 'ChargeProfiling', 'ChargeCharging', 'ChargeFinished']);

/** The port mode the flags show. Biased counts as Data (a data port with a bias for dumb chargers). */
export function modeFromFlags(flags: UsbHubDeviceFlags[]): UsbPortMode | 'Unknown' {
  if (flags.includes('Off')) return 'Off';
  if (flags.includes('Sync') || flags.includes('Biased')) return 'Data';
  if (flags.some((flag) => CHARGE_FLAGS.has(flag))) return 'Charge';
  return 'Unknown';
}

export function parseFlags(text: string): UsbHubDeviceFlags[] {
  const flags: UsbHubDeviceFlags[] = [];
  for (const letter of text.trim().split(/\s+/)) {
    const name = FLAG_NAMES[letter];
    if (name && !flags.includes(name)) flags.push(name);
  }
  return flags;
}

const STATE_LINE = /^\s*(\d{1,2}),\s*(\d+),\s*([A-Za-z ]*?),\s*(\d+),\s*(\d+),\s*(\d+|x),\s*([\d.]+)\s*$/;

/** `state`: one line per port `p, mA, flags, profile, time_charging_s, time_charged_s|x, energy_Wh`. */
export function parseState(lines: string[]): UsbPortStatus[] {
  const ports: UsbPortStatus[] = [];
  for (const line of lines) {
    const m = STATE_LINE.exec(line);
    if (!m) continue;
    const flags = parseFlags(m[3]);
    ports.push({
      port: Number(m[1]),
      milliamps: Number(m[2]),
      flags: flags.length > 0 ? flags : ['None'],
      state: modeFromFlags(flags),
      chargingProfile: m[4],
      chargingSeconds: Number(m[5]),
      attached: flags.includes('Attached'),
    });
  }
  return ports;
}

interface HubIdentity {
  serialNumber: string;
  model: string;
  firmware: string;
  manufacturer: string;
}

/** `id`: `mfr:cambrionix,mode:main,hw:PP15S,hwid:0x13,fw:1.68,bl:0.15,sn:000000,group:-,fc:un`. */
export function parseId(lines: string[]): HubIdentity {
  const values = new Map<string, string>();
  for (const pair of lines.join(',').split(',')) {
    const at = pair.indexOf(':');
    if (at > 0) values.set(pair.slice(0, at).trim().toLowerCase(), pair.slice(at + 1).trim());
  }
  return {
    serialNumber: values.get('sn') ?? '',
    model: values.get('hw') ?? '',
    firmware: values.get('fw') ?? '',
    manufacturer: values.get('mfr') ?? '',
  };
}

interface SystemInfo {
  description: string;
  model: string;
  firmware: string;
  compiled: string;
}

/** `system`: first line the product description, then `Key: value` rows (Hardware, Firmware, Compiled, ...). */
export function parseSystem(lines: string[]): SystemInfo {
  const info: SystemInfo = { description: '', model: '', firmware: '', compiled: '' };
  for (const line of lines) {
    const m = /^\s*([^:]+):\s*(.*)$/.exec(line);
    if (!m) {
      if (!info.description && line.trim()) info.description = line.trim();
      continue;
    }
    const key = m[1].trim().toLowerCase();
    if (key === 'hardware') info.model = m[2].trim();
    else if (key === 'firmware') info.firmware = m[2].trim();
    else if (key === 'compiled') info.compiled = m[2].trim();
  }
  return info;
}

interface HealthInfo {
  fiveVoltNow?: number;
  fiveVoltMin?: number;
  fiveVoltMax?: number;
  temperatureC?: number;
  uptimeSeconds?: number;
  rebooted?: boolean;
  /** Supply and error flags (`UV`, `OV`, `OT`) that are set. */
  errorFlags: string[];
}

/**
 * `health`: `parameter: value` rows. The 5 V rows (`5V Now:   5.13`) are verified against a live hub; the
 * temperature, uptime and rebooted row names are not (testbench.md 2.2), so they are matched loosely.
 */
export function parseHealth(lines: string[]): HealthInfo {
  const info: HealthInfo = { errorFlags: [] };
  for (const line of lines) {
    const m = /^\s*([^:]+):\s*(.*?)\s*$/.exec(line);
    if (!m) continue;
    const key = m[1].trim().toLowerCase().replace(/\s+/g, ' ');
    const value = m[2];
    const number = Number.parseFloat(value);
    if (key === '5v now') info.fiveVoltNow = number;
    else if (key === '5v min') info.fiveVoltMin = number;
    else if (key === '5v max') info.fiveVoltMax = number;
    else if (/^temperature( now)?( \(c\))?$/.test(key)) info.temperatureC = number;
    else if (/^(uptime|up time|system up)/.test(key)) info.uptimeSeconds = Number.parseInt(value, 10);
    else if (key === 'rebooted') info.rebooted = value.trim() === '1' || /^(yes|true)$/i.test(value.trim());
    else if (/flags$/.test(key)) {
      for (const flag of value.split(/\s+/)) if (/^(UV|OV|OT)$/.test(flag) && !info.errorFlags.includes(flag)) info.errorFlags.push(flag);
    }
  }
  return info;
}

/** `*E421: Invalid mode. ...` or `*FATAL ERROR E500: ...` -> code and text; undefined for any other line. */
export function parseErrorLine(line: string): { code: string; text: string; fatal: boolean } | undefined {
  const m = /^\*(FATAL ERROR )?E(\d+):\s*(.*)$/.exec(line.trim());
  return m ? { code: `E${m[2]}`, text: m[3], fatal: m[1] !== undefined } : undefined;
}

/** The CLI letter for a port mode. */
export function modeLetter(mode: UsbPortMode): string {
  return mode === 'Off' ? 'o' : mode === 'Data' ? 's' : 'c';
}
