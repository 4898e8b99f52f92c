/**
 * A device's USB location as the adb server shows it: `adb devices -l` prints `usb:1-1.4.2` (bus-port.port..., the
 * natural key of the hub port; device-data.md 1.13). Network devices have none.
 */
import type { Client } from '@devicefarmer/adbkit';

/**
 * adbkit splits `adb devices -l` lines by position, so `usb:` lands in a different field when a device has no
 * path: take whichever field carries it.
 */
export function usbLocationOf(fields: Record<string, unknown>): string | undefined {
  for (const value of Object.values(fields)) {
    if (typeof value === 'string' && value.startsWith('usb:') && value.length > 4) return value.slice(4);
  }
  return undefined;
}

/** `1-1.4.2`, or undefined when the device has no USB path (network, emulator) or is not listed. */
export async function lookupUsbLocation(client: Client, serial: string): Promise<string | undefined> {
  const devices = await client.listDevicesWithPaths();
  const entry = (devices as Array<{ id: string }>).find((device) => device.id === serial);
  return entry ? usbLocationOf(entry as unknown as Record<string, unknown>) : undefined;
}
