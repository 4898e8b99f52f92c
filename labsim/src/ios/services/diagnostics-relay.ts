/**
 * com.apple.mobile.diagnostics_relay: Restart / Shutdown (the device leaves the bus once the host has hung up,
 * as WaitForDisconnect asks, and comes back like a reboot), Sleep, Goodbye, and IORegistry for the battery
 * (AppleSmartBattery, what richer battery readers use).
 */
import type { SimIosDevice } from '../device';
import { type ByteLink, attachPlistChannel } from '../plist-channel';
import type { PlistDict } from '@devicelab/shared';

export function serveDiagnosticsRelay(device: SimIosDevice, link: ByteLink): void {
  let rebootOnClose = false;
  const channel = attachPlistChannel(link, (message) => {
    const ok = (fields: PlistDict = {}): void => channel.send({ Status: 'Success', ...fields });
    switch (message.Request) {
      case 'Restart':
      case 'Shutdown':
        rebootOnClose = true;
        ok();
        if (message.WaitForDisconnect !== true) setTimeout(() => device.reboot(), 200).unref();
        return;
      case 'Sleep':
        return ok();
      case 'Goodbye':
        ok();
        return;
      case 'IORegistry':
        if (message.EntryClass === 'AppleSmartBattery' || message.EntryName === 'AppleSmartBattery') return ok({ Diagnostics: { IORegistry: smartBattery(device) } });
        return channel.send({ Status: 'UnknownRequest' });
      default:
        return channel.send({ Status: 'UnknownRequest' });
    }
  });
  channel.on('close', () => {
    if (rebootOnClose) device.reboot();
  });
}

function smartBattery(device: SimIosDevice): PlistDict {
  const { level, charging, externalConnected } = device.batteryState();
  return {
    BatteryInstalled: true,
    CurrentCapacity: level,
    MaxCapacity: 100,
    IsCharging: charging,
    ExternalConnected: externalConnected,
    FullyCharged: externalConnected && level >= 100,
    CycleCount: 214,
    DesignCapacity: 3227,
    NominalChargeCapacity: 2968,
    Temperature: 2950,
    Voltage: 4012,
    InstantAmperage: charging ? 812 : -245,
    AtCriticalLevel: level <= 5,
  };
}
