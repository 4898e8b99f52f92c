/**
 * Puts the USB hub and port on every DeviceState the driver reports (usbHubSerialNumber, usbHubPortNumber)
 * and lets the USB hub service see each device's state. A Proxy, so every other driver method passes through
 * untouched whatever the DeviceDriver interface grows.
 */
import type { DeviceState } from '@devicelab/proto';
import type { DeviceDriver, DeviceListener } from '../drivers/device-driver';
import type { UsbHubService } from './usb-hub-service';

export function withUsbPorts(driver: DeviceDriver, hubs: UsbHubService): DeviceDriver {
  const mapped = (state: DeviceState): DeviceState => {
    const at = hubs.portOf(state);
    const result = at ? { ...state, usbHubSerialNumber: at.hubSerialNumber, usbHubPortNumber: at.port } : state;
    hubs.deviceChanged(result);
    return result;
  };
  return new Proxy(driver, {
    get(target, property) {
      if (property === 'start') {
        return (listener: DeviceListener) => target.start({
          deviceChanged: (state) => listener.deviceChanged(mapped(state)),
          deviceRemoved: (id) => {
            hubs.deviceRemoved(id);
            listener.deviceRemoved(id);
          },
        });
      }
      if (property === 'snapshot') return () => target.snapshot().map(mapped);
      if (property === 'describe') return async (id: string) => mapped(await target.describe(id));
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
