/** adb device states -> DeviceReadiness (GADS-style "why is this device not usable?"). */
import type { DeviceReadiness } from '@devicelab/shared';

interface ReadinessInfo { readiness: DeviceReadiness; detail: string }

export function readinessForAdbState(adbState: string): ReadinessInfo {
  switch (adbState) {
    case 'device':
    case 'emulator':
      return { readiness: 'Booting', detail: 'Waiting for the device to finish booting' };
    case 'unauthorized':
      return { readiness: 'Unauthorized', detail: 'USB debugging is not authorized: accept the prompt on the device' };
    case 'authorizing':
      return { readiness: 'Unauthorized', detail: 'adb is authorizing with the device' };
    case 'offline':
      return { readiness: 'Offline', detail: 'adb reports the device offline' };
    default:
      return { readiness: 'Offline', detail: `adb reports the device in state "${adbState}"` };
  }
}
