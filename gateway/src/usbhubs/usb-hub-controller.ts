/**
 * The one contract every USB hub driver implements (Cambrionix over its serial CLI, plain hubs through
 * uhubctl). A controller owns one physical hub: it reports the hub and its ports, switches a port (or every
 * port) between Off, Data and Charge, and reboots the hub where the hardware can.
 */
import type { UsbHubDeviceFlags } from '@devicelab/shared';

/** What a port can be switched to (UsbHubPortState without Unknown). */
export type UsbPortMode = 'Off' | 'Data' | 'Charge';

export interface UsbPortStatus {
  port: number;
  /** Unknown when the hub cannot say (e.g. between a reboot and the next poll). */
  state: UsbPortMode | 'Unknown';
  flags: UsbHubDeviceFlags[];
  milliamps: number;
  /** Seconds the current charge has run (0 when not charging). */
  chargingSeconds: number;
  /** Charging profile id as the hub names it ('' when the hub has none). */
  chargingProfile: string;
  attached: boolean;
}

export interface UsbHubStatus {
  /** Hardware serial number: the hub's key in the API. */
  serialNumber: string;
  /** Where the gateway reaches the hub (serial path, USB location). */
  location: string;
  name: string;
  description: string;
  model: string;
  firmware: string;
  firmwareDate: string;
  uptimeSeconds: number;
  fiveVoltNow: number;
  fiveVoltMin: number;
  fiveVoltMax: number;
  /** Why the hub is unusable (unplugged, not answering, error flags), '' when fine. */
  errorMessage: string;
  isErrored: boolean;
  ports: UsbPortStatus[];
}

export interface UsbHubController {
  /** Which driver speaks to the hub ('cambrionix', 'uhubctl'). */
  readonly kind: string;
  /** Opens the hub and keeps it open (reconnects by itself after unplug or reboot). */
  start(): Promise<void>;
  /** The latest known status; `isErrored` while the hub is away. */
  status(): UsbHubStatus;
  /** Reads the hub now and returns the fresh status. */
  refresh(): Promise<UsbHubStatus>;
  /** Switches one port, or every port when `port` is undefined. */
  setPortMode(port: number | undefined, mode: UsbPortMode): Promise<void>;
  reboot(): Promise<void>;
  stop(): Promise<void>;
  /** Called with every new status (polls, mode changes, disconnects). */
  onStatus(listener: (status: UsbHubStatus) => void): void;
}

/** A hub operation failed; `message` is meant for the user (it ends up in the API's errorMessage). */
export class UsbHubError extends Error {
  constructor(message: string, readonly code?: string) {
    super(message);
    this.name = 'UsbHubError';
  }
}
