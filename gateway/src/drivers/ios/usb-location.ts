/**
 * An iOS device's USB port path from usbmuxd's LocationID. Linux usbmuxd reports `(bus << 16) | device address`
 * (libusb's bus number and address), which is not a port path; the kernel lists every USB device under
 * /sys/bus/usb/devices/<port path> (`1-1.4.2`) with its `busnum` and `devnum`, so the device whose pair matches
 * gives the path the USB hubs are mapped by (as adb's `usb:1-1.4.2` does for Android).
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';

export const DEFAULT_USB_SYSFS_DIR = '/sys/bus/usb/devices';

/** Port paths only (`1-1.4.2`); interfaces (`1-1.4.2:1.0`) and root hubs (`usb1`) are not devices on ports. */
const PORT_PATH = /^\d+-\d+(\.\d+)*$/;

async function readNumber(file: string): Promise<number | undefined> {
  try {
    const value = Number((await fs.readFile(file, 'utf8')).trim());
    return Number.isInteger(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** `1-1.4.2`, or undefined when the host lists no USB device at that bus and address. */
export async function usbLocationOfLocationId(locationId: number, sysfsDir = DEFAULT_USB_SYSFS_DIR): Promise<string | undefined> {
  const bus = locationId >>> 16;
  const address = locationId & 0xffff;
  let names: string[];
  try {
    names = await fs.readdir(sysfsDir);
  } catch {
    return undefined;
  }
  for (const name of names.filter((n) => PORT_PATH.test(n) && n.startsWith(`${bus}-`))) {
    const dir = path.join(sysfsDir, name);
    if (await readNumber(path.join(dir, 'devnum')) === address && await readNumber(path.join(dir, 'busnum')) === bus) return name;
  }
  return undefined;
}
