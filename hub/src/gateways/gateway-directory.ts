/**
 * What the domain needs from the connected gateways. Implemented by the link server (`link-server.ts`) and its
 * channels (`channels/`); domain code and its tests depend only on this interface.
 */
import type http from 'node:http';
import type { CommandAction, CommandResult, OpenTunnel, Retention, TunnelFrame, UsbHubReport } from '@devicelab/proto';

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
   * before the result arrives, or `timeoutMs` passes. `onProgress` hears the percent the gateway reports while
   * the command runs (installs).
   */
  sendCommand(vendorUniqueIdentifier: string, action: CommandAction, timeoutMs: number,
    onProgress?: (percent: number) => void): Promise<CommandResult>;
  connectedGateways(): ConnectedGateway[];
  /** Resolves once connectedGateways() reflects every change heard so far (other replicas' gateways); none: always. */
  settled?(): Promise<void>;
  /**
   * Tells the connected gateways that the device's current retain or access changed (a retain id with the
   * retainer's adb keys, or '' when released, disabled or deleted), so its gateway accepts only tickets of the
   * current retain and only the retainer's keys. Best effort: a gateway that misses it gets the full set in its
   * next Welcome. `othersTold`: the other hub replicas heard of it already (retain_device and release_device
   * tell them in their own transaction, as `replicaId`), so only this replica's gateways are told here.
   */
  notifyRetention(retention: Retention, othersTold?: boolean): void;
  /** This hub replica's id on the command relay, for `retain_device` / `release_device`; none without replicas. */
  readonly replicaId?: string;
  /**
   * Where the device's adb endpoint listens for this retain, once its gateway has said so (it answers every
   * Retention), or at once when the gateway is known to let nobody in until this retain reaches it (the port its
   * last release kept, channels/access.ts); undefined when the gateway serves none or does not answer within
   * `timeoutMs`. `confirmed`: only once the gateway has answered this very retain.
   */
  accessPort(vendorUniqueIdentifier: string, retainId: string, timeoutMs: number, confirmed?: boolean): Promise<number | undefined>;
  /**
   * A relayed byte stream into the device's access endpoint through its gateway. Rejects with
   * GatewayUnavailableError when no connected gateway holds the device or it does not answer within `timeoutMs`.
   */
  openTunnel(request: Omit<OpenTunnel, 'tunnelId'>, timeoutMs: number): Promise<DeviceTunnel>;
  /** Sends every gateway the current MetricsSettings (a device's passive logging was switched). Best effort. */
  notifyMetricsSettings(): void;
  /**
   * Sends a USB hub command to the gateway that reports the hub with this serial number. Rejects with
   * GatewayUnavailableError when no connected gateway reports it or the gateway does not answer in time.
   */
  sendUsbHubCommand(hubSerialNumber: string, action: CommandAction, timeoutMs: number): Promise<CommandResult>;
  /**
   * HTTP to the device's automation server (its Appium server on its gateway): a keep-alive agent whose connections
   * are automation tunnels, reused across requests, a few per device at most, idle ones closed. A request fails with
   * GatewayUnavailableError when no gateway here holds the device or its gateway refuses (no server for it).
   */
  automationAgent(vendorUniqueIdentifier: string): http.Agent;
  /**
   * The device's automation server log: JSON lines as Appium wrote them, newline separated, oldest first; all the
   * gateway keeps, or only the lines of that session and/or request (Appium's `context.sessionId`/`requestId`).
   */
  automationLog(vendorUniqueIdentifier: string, filter: { sessionId?: string; requestId?: string }): Promise<string>;
  /** What each connected gateway reported of its automation installation. */
  automationInfo(): AutomationInformation[];
}

/** A gateway's automation installation as it reported it. */
export interface AutomationInformation {
  gatewayName: string;
  /** Where Appium and its drivers are installed (APPIUM_HOME). */
  path: string;
  version: string;
  /** Tells installations apart (path, version, drivers). */
  pathHash: string;
  drivers: Array<{ name: string; version: string }>;
  /** What is wrong with it ('' when nothing). */
  configurationError: string;
}

/** The hub end of a relayed device connection: a gRPC duplex stream of TunnelFrames (raw bytes in `data`). */
export interface DeviceTunnel {
  write(frame: TunnelFrame): boolean;
  end(): void;
  cancel(): void;
  on(event: 'data', listener: (frame: TunnelFrame) => void): this;
  on(event: 'drain' | 'end' | 'close', listener: () => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
  once(event: 'drain', listener: () => void): this;
  pause(): this;
  resume(): this;
}

/**
 * Drops a tunnel at once: the hub's end is the server side of the gateway's Tunnel call, which has no `cancel` (a
 * client call's) but is a stream that can be destroyed.
 */
export function abortTunnel(tunnel: DeviceTunnel): void {
  const stream = tunnel as DeviceTunnel & { destroy?: () => void };
  if (typeof stream.cancel === 'function') stream.cancel();
  else stream.destroy?.();
}
