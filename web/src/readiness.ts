/** Why a device can or cannot be used now, from the fields GET /Device gives (readiness is a hub extension). */
import type { Device, SessionUser } from './api/types';

export type ReadinessKind = 'free' | 'mine' | 'busy' | 'reserved' | 'offline' | 'unauthorized' | 'rebooting' | 'disabled';

export interface Readiness { kind: ReadinessKind; text: string; reason?: string }

/** What an Offline device is doing, from the hub's `readiness`; plain Offline when the hub does not say. */
function notReady(device: Device): Readiness {
  const reason = device.readinessReason;
  switch (device.readiness) {
    case 'Unauthorized': return { kind: 'unauthorized', text: 'Unauthorized', reason };
    case 'Rebooting': return { kind: 'rebooting', text: 'Rebooting', reason };
    case 'Booting': return { kind: 'rebooting', text: 'Booting', reason };
    default: return { kind: 'offline', text: 'Offline', reason };
  }
}

export function readiness(device: Device, user: SessionUser): Readiness {
  if (!device.enabled) return { kind: 'disabled', text: 'Disabled', reason: device.readinessReason };
  if (device.availability !== 'Online') return notReady(device);
  if (device.retainedById === user.id) return { kind: 'mine', text: 'Retained by you' };
  if (device.retainedById) return { kind: 'busy', text: `In use by ${device.retainedByDisplayName ?? 'someone'}` };
  if (device.reservedById && device.reservedById !== user.id) {
    return { kind: 'reserved', text: `Reserved by ${device.reservedByDisplayName ?? 'someone'}` };
  }
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
