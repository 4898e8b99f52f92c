/**
 * Puts the USB location, hub and port on every DeviceState the driver reports (usbLocation,
 * usbHubSerialNumber, usbHubPortNumber) and lets the USB hub service see each device's state. A Proxy, so every
 * other driver method passes through untouched whatever the DeviceDriver interface grows.
 */
import type { DeviceState } from '@devicelab/proto';
import type { DeviceDriver, DeviceListener } from '../drivers/device-driver';
import type { UsbHubService } from './usb-hub-service';
import type { UsbLocationSource } from './usb-locations';

/** Driver methods that resolve with a device's state: it carries the USB facts like every other report. */
const STATE_RESULTS = new Set<string | symbol>(['install', 'uninstall', 'readPackages']);

/** Wraps a driver or the driver registry (anything that tracks devices and reports their states). */
export function withUsbPorts<T extends Pick<DeviceDriver, 'start' | 'snapshot'>>(driver: T, hubs: UsbHubService, locations?: UsbLocationSource): T {
  /** Looked-up USB locations; null while a lookup runs or when the device has none. */
  const known = new Map<string, string | null>();
  const mapped = (state: DeviceState): DeviceState => {
    const usbLocation = state.usbLocation || known.get(state.vendorUniqueIdentifier) || undefined;
    const located = usbLocation ? { ...state, usbLocation } : state;
    const at = hubs.portOf(located);
    const result = at ? { ...located, usbHubSerialNumber: at.hubSerialNumber, usbHubPortNumber: at.port } : located;
    hubs.deviceChanged(result);
    return result;
  };
  /** Looks the location up once per appearance; reports the device again when one is found. */
  const locate = (state: DeviceState, listener: DeviceListener) => {
    const id = state.vendorUniqueIdentifier;
    if (!locations || state.usbLocation || known.has(id)) return;
    known.set(id, null);
    locations.lookup(id).then((location) => {
      if (!location || known.get(id) !== null) return;
      known.set(id, location);
      const latest = hubs.device(id);
      if (latest) listener.deviceChanged(mapped(latest));
    }, () => known.delete(id));
  };
  return new Proxy(driver, {
    get(target, property) {
      if (property === 'start') {
        return (listener: DeviceListener) => target.start({
          deviceChanged: (state) => {
            listener.deviceChanged(mapped(state));
            locate(state, listener);
          },
          deviceRemoved: (id) => {
            known.delete(id); // it may come back on another port
            hubs.deviceRemoved(id);
            listener.deviceRemoved(id);
          },
        });
      }
      if (property === 'snapshot') return () => target.snapshot().map(mapped);
      if (STATE_RESULTS.has(property)) {
        const method = Reflect.get(target, property, target) as (...args: unknown[]) => Promise<DeviceState>;
        return async (...args: unknown[]) => mapped(await method.apply(target, args));
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
