/** `dumpsys battery`: `key: value` lines (first occurrence per key wins). */
import type { DeviceBatteryStatus } from '@devicelab/shared';
import { lines } from './text';

interface BatteryInfo { percent: number; status: DeviceBatteryStatus }

const STATUS: Record<string, DeviceBatteryStatus> = {
  '1': 'Unknown', '2': 'Charging', '3': 'Discharging', '4': 'NotCharging', '5': 'Full',
};

export function parseBattery(text: string): BatteryInfo {
  const values = new Map<string, string>();
  for (const line of lines(text)) {
    const m = /^\s*([^:]+):\s*(.*)$/.exec(line);
    if (m && !values.has(m[1].trim())) values.set(m[1].trim(), m[2].trim());
  }
  const level = Number(values.get('level'));
  const scale = Number(values.get('scale') ?? '100') || 100;
  const percent = values.has('level') && Number.isFinite(level) ? Math.round((level * 100) / scale) : -1;
  return { percent, status: STATUS[values.get('status') ?? ''] ?? 'Unknown' };
}

/** `temperature: 298` in `dumpsys battery` is tenths of a degree Celsius. */
export function parseBatteryTemperature(text: string): number | undefined {
  const m = /^\s*temperature:\s*(-?\d+)\s*$/m.exec(text);
  return m ? Number(m[1]) / 10 : undefined;
}
