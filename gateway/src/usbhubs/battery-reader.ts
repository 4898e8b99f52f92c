/** What battery care and USB telemetry need from the device side: a device's battery read now. */
import type { BatteryReading } from '../drivers/device-driver';

export interface BatteryReader {
  /** Undefined when the device cannot be read now (not connected, not answering, platform cannot tell). */
  read(vendorUniqueIdentifier: string): Promise<BatteryReading | undefined>;
}
