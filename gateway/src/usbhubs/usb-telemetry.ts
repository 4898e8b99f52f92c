/**
 * USB hub telemetry for metrics: one `usb_hub` row per device port per interval, with the
 * port's voltage (the hub's 5 V rail: Universal firmware has no per-port voltage), current, power, usb state
 * (Off | Sync | Charge, the metrics vocabulary), charging profile and time, and the device's battery.
 */
import type { Logger } from '@devicelab/shared';
import type { MetricsSink } from '../samplers/metrics-sink';
import type { BatteryReader } from './battery-reader';
import { HubPortLoop } from './hub-port-loop';
import type { UsbHubService } from './usb-hub-service';

const USB_STATE = { Off: 'Off', Data: 'Sync', Charge: 'Charge' } as const;

export class UsbTelemetry extends HubPortLoop {
  constructor(
    private readonly hubs: UsbHubService,
    private readonly battery: BatteryReader,
    private readonly sink: MetricsSink,
    intervalMs: number,
    logger: Logger,
  ) {
    super(intervalMs, logger, 'USB telemetry');
  }

  protected async pass(): Promise<void> {
    for (const { hub, status, device } of this.hubs.portsWithDevices()) {
      if (hub.isErrored || status.state === 'Unknown') continue;
      const fields: Record<string, number | string> = {
        voltage: hub.fiveVoltNow,
        amperage: status.milliamps / 1000,
        wattage: Math.round(hub.fiveVoltNow * status.milliamps) / 1000,
        usb_state: USB_STATE[status.state],
        charging_seconds: status.chargingSeconds,
      };
      if (status.chargingProfile !== '') fields.charging_profile = status.chargingProfile;
      // Only a device with a data link can be read; otherwise the battery fields are absent, never zero.
      const reading = this.hubs.device(device)?.readiness === 'Ready' ? await this.battery.read(device) : undefined;
      if (reading) {
        fields.battery_percentage = reading.percent;
        fields.battery_status = reading.status;
      }
      this.sink.record({ vendorUniqueIdentifier: device, table: 'usb_hub', time: Date.now(), fields });
    }
  }
}
