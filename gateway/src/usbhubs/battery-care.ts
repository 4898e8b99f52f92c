/**
 * Battery care: keeps each device's battery between two thresholds by switching its port between Data and
 * Charge (Cambrionix hubs; a port that cannot charge is left alone).
 *
 *  - Data, battery at or below `lowPercent` and not hotter than `maxTemperatureC` -> Charge.
 *  - A port in Charge has no data link, so the battery cannot be read there: after `chargeCheckMs` the port
 *    goes back to Data to read it. At or above `highPercent`, or too hot, it stays on Data (charging done);
 *    below, it returns to Charge.
 *
 * Only ports this policy switched to Charge are taken back: a port someone set to Off or Charge by hand is
 * theirs. Every switch is an Event (Note) on the device.
 */
import type { Logger } from '@devicelab/shared';
import type { BatteryReader } from './battery-reader';
import { HubPortLoop } from './hub-port-loop';
import type { UsbHubService } from './usb-hub-service';

export interface BatteryCareOptions {
  lowPercent: number;
  highPercent: number;
  /** Never charge a battery at or above this temperature (where the device reports one). */
  maxTemperatureC: number;
  /** How often the policy looks at every port. */
  checkIntervalMs: number;
  /** How long a charge runs before the port goes back to Data to read the battery. */
  chargeCheckMs: number;
}

export const DEFAULT_BATTERY_CARE: BatteryCareOptions = {
  lowPercent: 20, highPercent: 80, maxTemperatureC: 40, checkIntervalMs: 60_000, chargeCheckMs: 20 * 60_000,
};

interface Charging {
  since: number;
  /** Back on Data to read the battery; waiting for the device to answer. */
  reading: boolean;
  readingSince?: number;
}

/** A device that does not answer on Data for this long after a charge is left to recovery. */
const READ_GIVE_UP_MS = 5 * 60_000;

export class BatteryCare extends HubPortLoop {
  /** Devices this policy put on Charge (by vendor unique identifier). */
  private readonly charging = new Map<string, Charging>();

  constructor(
    private readonly hubs: UsbHubService,
    private readonly battery: BatteryReader,
    private readonly options: BatteryCareOptions,
    logger: Logger,
  ) {
    super(options.checkIntervalMs, logger, 'battery care');
  }

  protected async pass(): Promise<void> {
    const { lowPercent, highPercent, maxTemperatureC, chargeCheckMs } = this.options;
    for (const { controller, hub, port, status: { state }, device } of this.hubs.portsWithDevices()) {
      if (hub.isErrored || controller.kind !== 'cambrionix') continue;
      const charging = this.charging.get(device);
      const where = `port ${port} of hub ${hub.serialNumber}`;
      if (state === 'Charge' && charging && !charging.reading && Date.now() - charging.since >= chargeCheckMs) {
        await controller.setPortMode(port, 'Data');
        charging.reading = true;
        charging.readingSince = Date.now();
        this.hubs.emitEvent(device, `Battery care: ${where} switched to Data to read the battery after charging`,
          `charged for ${Math.round((Date.now() - charging.since) / 1000)} s`);
        continue;
      }
      if (state !== 'Data') continue;
      const reading = await this.battery.read(device);
      if (!reading) {
        // Not on adb yet (just switched) or not answering: next pass; after long silence stop waiting.
        if (charging?.reading && Date.now() - (charging.readingSince ?? 0) > READ_GIVE_UP_MS) {
          this.charging.delete(device);
          this.logger.warn({ device }, 'battery care: no battery reading after charging; port left on Data');
        }
        continue;
      }
      const hot = reading.temperatureC !== undefined && reading.temperatureC >= maxTemperatureC;
      const detail = `battery ${reading.percent}%${reading.temperatureC === undefined ? '' : `, ${reading.temperatureC} °C`}`;
      if (charging?.reading) {
        if (reading.percent >= highPercent || hot) {
          this.charging.delete(device);
          this.hubs.emitEvent(device, hot
            ? `Battery care: charging stopped on ${where}: battery at ${reading.temperatureC} °C (limit ${maxTemperatureC} °C)`
            : `Battery care: charging done on ${where}: battery at ${reading.percent}% (high threshold ${highPercent}%), port stays on Data`,
          detail);
        } else {
          await controller.setPortMode(port, 'Charge');
          this.charging.set(device, { since: Date.now(), reading: false });
          this.hubs.emitEvent(device,
            `Battery care: ${where} switched back to Charge: battery at ${reading.percent}% (high threshold ${highPercent}%)`, detail);
        }
        continue;
      }
      if (reading.percent <= lowPercent) {
        if (hot) {
          this.logger.warn({ device, temperatureC: reading.temperatureC }, 'battery low but too hot to charge');
          continue;
        }
        await controller.setPortMode(port, 'Charge');
        this.charging.set(device, { since: Date.now(), reading: false });
        this.hubs.emitEvent(device,
          `Battery care: ${where} switched to Charge: battery at ${reading.percent}% (low threshold ${lowPercent}%)`, detail);
      }
    }
  }
}
