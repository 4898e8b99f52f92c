/** Why a device can or cannot be used now, from the fields GET /Device gives. */
import type { Device, SessionUser } from './api/types';

export type ReadinessKind = 'free' | 'mine' | 'busy' | 'offline' | 'disabled';

export function readiness(device: Device, user: SessionUser): { kind: ReadinessKind; text: string } {
  if (!device.enabled) return { kind: 'disabled', text: 'Disabled' };
  if (device.availability !== 'Online') return { kind: 'offline', text: 'Offline' };
  if (device.retainedById === user.id) return { kind: 'mine', text: 'Retained by you' };
  if (device.retainedById) return { kind: 'busy', text: `In use by ${device.retainedByDisplayName ?? 'someone'}` };
  return { kind: 'free', text: 'Available' };
}

export function batteryText(device: Device): string {
  if (device.batteryStatus === 'Unknown' && !device.batteryPercentCharged) return '—';
  const charging = device.batteryStatus === 'Charging' ? ' ⚡' : device.batteryStatus === 'Full' ? ' (full)' : '';
  return `${device.batteryPercentCharged}%${charging}`;
}

export function portText(device: Device): string {
  return device.usbHubSerialNumber ? `${device.usbHubSerialNumber} · port ${device.usbHubPortNumber ?? '?'}` : '—';
}
