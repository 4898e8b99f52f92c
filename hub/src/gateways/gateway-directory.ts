/**
 * What the domain needs from the connected gateways. Implemented by the link server (`link-server.ts`);
 * domain code and its tests depend only on this interface.
 */
import type { CommandAction, CommandResult, UsbHubReport } from '@devicelab/proto';

export interface ConnectedGateway {
  id: string;
  name: string;
  publicAddress: string;
  publicPort: number;
  version: string;
  connectedAt: Date;
  deviceVendorUniqueIdentifiers: string[];
  /** The gateway's USB hubs as it last reported them. */
  usbHubs: UsbHubReport[];
}

export class GatewayUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GatewayUnavailableError';
  }
}

export interface GatewayDirectory {
  /**
   * Sends a command to the gateway that currently holds the device and waits for its result.
   * Rejects with GatewayUnavailableError when no connected gateway holds the device, the stream is lost
   * before the result arrives, or `timeoutMs` passes.
   */
  sendCommand(vendorUniqueIdentifier: string, action: CommandAction, timeoutMs: number): Promise<CommandResult>;
  connectedGateways(): ConnectedGateway[];
  /**
   * Tells the connected gateways that the device's current retain changed (`retainId`, or '' when released), so
   * its gateway accepts only tickets of the current retain. Best effort: a gateway that misses it gets the full
   * set in its next Welcome.
   */
  notifyRetention(vendorUniqueIdentifier: string, retainId: string): void;
  /** Sends every gateway the current MetricsSettings (a device's passive logging was switched). Best effort. */
  notifyMetricsSettings(): void;
  /**
   * Sends a USB hub command to the gateway that reports the hub with this serial number. Rejects with
   * GatewayUnavailableError when no connected gateway reports it or the gateway does not answer in time.
   */
  sendUsbHubCommand(hubSerialNumber: string, action: CommandAction, timeoutMs: number): Promise<CommandResult>;
}
