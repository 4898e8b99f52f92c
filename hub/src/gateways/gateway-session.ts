/**
 * One connected gateway: its Connect stream after authentication. Answers Hello with Welcome, applies inventory
 * to the records (in arrival order, through the gateway's write queue), sends commands and matches results by
 * command id, and ends the session on stream loss or three heartbeat intervals of silence, taking the
 * gateway's devices Offline and failing its pending commands.
 */
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type {
  AccessEndpoint, CommandAction, CommandResult, DeviceAccessEvent, DeviceState, GatewayMessage, Hello, HubMessage, MetricsBatch,
  OpenTunnel, Retention, UsbHubReport,
} from '@devicelab/proto';
import { gatewayRetentions } from '../domain/device-access';
import { recordGatewayDeviceEvent } from '../domain/gateway-device-events';
import { noteChange } from '../events/change-feed';
import type { Logger } from '@devicelab/shared';
import { MetricsReceiver } from '../metrics/link-ingest';
import type { MetricsStore } from '../metrics/metrics-store';
import type { Db } from '../store/database';
import type { GatewayRow } from '../store/schema';
import { applyDeviceState, setGatewayConnected, setGatewayUsbHubs, takeDevicesOffline } from './device-inventory';
import { GatewayUnavailableError, type ConnectedGateway } from './gateway-directory';
import { hubProof } from './gateway-tokens';

/** Heartbeat silence longer than this many intervals ends the session (devicelab_link.proto). */
const MISSED_HEARTBEATS_LIMIT = 3;

export type ConnectCall = grpc.ServerDuplexStream<GatewayMessage, HubMessage>;

/** Device state and other records, or metrics batches (which never delay device state). */
export type WriteLane = 'records' | 'metrics';

interface GatewaySessionContext {
  db: Db;
  gateway: GatewayRow;
  call: ConnectCall;
  heartbeatIntervalMs: number;
  logger: Logger;
  /** Runs record writes (or metrics batches) for this gateway one after another, across its successive sessions. */
  enqueueWrite(gatewayId: string, write: () => Promise<void>, lane?: WriteLane): Promise<void>;
  /** Hello accepted: the registry makes this the gateway's session (replacing an older one). */
  onEstablished(session: GatewaySession): void;
  onEnded(session: GatewaySession): void;
  /** SPKI DER of the DeviceAccessTicket signing key, for Welcome. */
  ticketPublicKey?: Buffer;
  /** Where the gateway's metrics batches go; without it batches are acknowledged unstored. */
  metrics?: MetricsStore;
}

interface PendingCommand {
  resolve(result: CommandResult): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
  onProgress?: (percent: number) => void;
}

export class GatewaySession {
  readonly connectedAt = new Date();
  /** Devices this gateway currently reports (any readiness): commands for them route here. */
  readonly devices = new Set<string>();
  /** The gateway's USB hubs as last reported (live state for GET /Gateway, not a record). */
  private usbHubs: UsbHubReport[] = [];
  private hello?: Hello;
  private readonly pending = new Map<string, PendingCommand>();
  private lastMessageAt = Date.now();
  private readonly timers: NodeJS.Timeout[] = [];
  private ended = false;
  /** Set when a newer connection of the same gateway took over: its snapshot reconciles, so no Offline flap. */
  private replaced = false;
  /** Retention changes (and AccessSync answers behind them) that arrive before Welcome is written; sent right behind it. */
  private heldRetentions: Extract<HubMessage, { body: 'retention' | 'accessSync' }>[] | undefined = [];
  private readonly metricsReceiver: MetricsReceiver | undefined;
  /**
   * Where each device's access endpoint listens, as the gateway last answered a Retention: for a retain, or for a
   * release that left the endpoint open with nobody allowed in (retain id '', the port kept for the next retain).
   */
  private readonly accessEndpoints = new Map<string, AccessEndpoint>();

  private accessWaiters: { endpoint: Omit<AccessEndpoint, 'port'>; resolve(port: number | undefined): void }[] = [];

  constructor(private readonly ctx: GatewaySessionContext) {
    this.metricsReceiver = ctx.metrics && new MetricsReceiver(ctx.db, ctx.metrics, ctx.gateway, ctx.logger);
  }

  get gatewayName(): string {
    return this.ctx.gateway.name;
  }

  get gatewayId(): string {
    return this.ctx.gateway.id;
  }

  /** The records store lost some of this gateway's reports: record it connected and ask for a fresh snapshot. */
  resync(): void {
    const hello = this.hello;
    if (this.ended || !hello) return;
    this.recordWrite(() => setGatewayConnected(this.ctx.db, this.ctx.gateway.id, true,
      { publicAddress: hello.publicAddress, publicPort: hello.publicPort }));
    this.write({ body: 'inventoryRequest', inventoryRequest: {} });
  }

  start(): void {
    const { call, heartbeatIntervalMs } = this.ctx;
    call.on('data', (message: GatewayMessage) => this.onMessage(message));
    call.on('end', () => this.end('stream closed by the gateway'));
    call.on('cancelled', () => this.end('stream cancelled'));
    call.on('error', (err: Error) => this.end(`stream error: ${err.message}`));
    call.on('close', () => this.end('stream closed'));
    // Checked twice per interval, so silence is noticed at most half an interval late.
    this.timers.push(setInterval(() => this.checkLiveness(), Math.max(50, heartbeatIntervalMs / 2)));
  }

  describe(): ConnectedGateway {
    return {
      id: this.ctx.gateway.id,
      name: this.ctx.gateway.name,
      publicAddress: this.hello?.publicAddress ?? '',
      publicPort: this.hello?.publicPort ?? 0,
      version: this.hello?.gatewayVersion ?? '',
      connectedAt: this.connectedAt,
      deviceVendorUniqueIdentifiers: [...this.devices],
      usbHubs: this.usbHubs,
    };
  }

  hasUsbHub(serialNumber: string): boolean {
    return this.usbHubs.some((hub) => hub.serialNumber === serialNumber);
  }

  sendCommand(vendorUniqueIdentifier: string, action: CommandAction, timeoutMs: number,
    onProgress?: (percent: number) => void): Promise<CommandResult> {
    if (this.ended) return Promise.reject(new GatewayUnavailableError(`Gateway ${this.gatewayName} is not connected.`));
    const commandId = randomUUID();
    return new Promise<CommandResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(commandId);
        reject(new GatewayUnavailableError(`Gateway ${this.gatewayName} did not answer within ${timeoutMs} ms.`));
      }, timeoutMs);
      this.pending.set(commandId, { resolve, reject, timer, onProgress });
      this.write({
        body: 'command',
        command: { commandId, vendorUniqueIdentifier, deadlineMs: Date.now() + timeoutMs, ...action },
      });
    });
  }

  /**
   * Ends the session; `replaced` when a newer connection of the same gateway took over. `hubStopping`: pending
   * commands get no answer, so their async jobs stay running for the next start to reconcile with the device
   * (the gateway goes on with them). Idempotent.
   */
  end(reason: string, options: {
    replaced?: boolean; hubStopping?: boolean; status?: grpc.StatusObject | Partial<grpc.StatusObject>;
  } = {}): void {
    if (this.ended) return;
    this.ended = true;
    this.replaced = options.replaced ?? false;
    for (const timer of this.timers) clearInterval(timer);
    for (const [, command] of this.pending) {
      clearTimeout(command.timer);
      if (!options.hubStopping) command.reject(new GatewayUnavailableError(`Gateway ${this.gatewayName} disconnected (${reason}).`));
    }
    this.pending.clear();
    for (const waiter of [...this.accessWaiters]) waiter.resolve(undefined);
    this.ctx.logger.info({ gateway: this.gatewayName, reason }, 'gateway session ended');
    this.closeCall(options.status);
    if (!this.replaced && this.hello) {
      const gatewayId = this.ctx.gateway.id;
      void this.ctx.enqueueWrite(gatewayId, async () => {
        await takeDevicesOffline(this.ctx.db, { gatewayId, detail: `Gateway disconnected: ${reason}` });
        await setGatewayConnected(this.ctx.db, gatewayId, false, undefined, this.usbHubs);
      });
    }
    this.ctx.onEnded(this); // behind the Offline write: the link lock is freed only once it has landed
  }

  private onMessage(message: GatewayMessage): void {
    if (this.ended) return;
    this.lastMessageAt = Date.now();
    if (!this.hello && message.body !== 'hello') {
      this.end('message before Hello', { status: { code: grpc.status.FAILED_PRECONDITION, details: 'Hello must come first' } });
      return;
    }
    switch (message.body) {
      case 'hello':
        return this.onHello(message.hello);
      case 'heartbeat':
        return;
      case 'snapshot':
        return this.onSnapshot(message.snapshot.devices ?? []);
      case 'deviceUpdate':
        this.devices.add(message.deviceUpdate.vendorUniqueIdentifier);
        return this.recordWrite(() => applyDeviceState(this.ctx.db, this.ctx.gateway.id, message.deviceUpdate));
      case 'deviceRemoved': {
        const id = message.deviceRemoved.vendorUniqueIdentifier;
        this.devices.delete(id);
        return this.recordWrite(() =>
          takeDevicesOffline(this.ctx.db, { gatewayId: this.ctx.gateway.id, only: [id], detail: 'Removed by the gateway' }),
        );
      }
      case 'commandResult':
        return this.onCommandResult(message.commandResult);
      case 'commandProgress': {
        const { commandId, percent } = message.commandProgress;
        // Only a percent the contract allows reaches the job: a gateway's bug cannot move a bar backwards or past 99.
        if (Number.isInteger(percent) && percent >= 0 && percent <= 99) this.pending.get(commandId)?.onProgress?.(percent);
        return;
      }
      case 'usbHubs': {
        const hubs = message.usbHubs.hubs ?? [];
        const changed = portStates(hubs) !== portStates(this.usbHubs);
        this.usbHubs = hubs;
        // Port states are recorded for the other replicas, and the event stream hears of them here (telemetry
        // alone is no change).
        if (changed) {
          return this.recordWrite(async () => {
            await setGatewayUsbHubs(this.ctx.db, this.ctx.gateway.id, hubs);
            await noteChange(this.ctx.db, 'usbHub', this.ctx.gateway.id);
          });
        }
        return;
      }
      case 'usbHubEvent': {
        const event = message.usbHubEvent;
        return this.recordWrite(() => recordGatewayDeviceEvent(this.ctx.db, this.ctx.gateway.id, event));
      }
      case 'metrics':
        return this.onMetrics(message.metrics);
      case 'accessEndpoint':
        return this.onAccessEndpoint(message.accessEndpoint);
      case 'accessEvent':
        return this.onAccessEvent(message.accessEvent);
      case 'accessSync':
        // Behind every Retention written before it (one ordered stream): the gateway checks the client it holds
        // against every retain and release this hub has answered by now.
        return this.sendRetentionOrdered({ body: 'accessSync', accessSync: message.accessSync });
    }
  }

  private onHello(hello: Hello): void {
    if (this.hello) return; // a repeated Hello changes nothing
    const { gateway, heartbeatIntervalMs } = this.ctx;
    if (hello.gatewayName && hello.gatewayName !== gateway.name) {
      this.end('Hello names another gateway', {
        status: { code: grpc.status.PERMISSION_DENIED, details: `authenticated as ${gateway.name}, Hello says ${hello.gatewayName}` },
      });
      return;
    }
    this.hello = hello;
    // Established first, so retains committed while the current ones are read are held and sent after Welcome.
    this.ctx.onEstablished(this);
    this.recordWrite(() =>
      setGatewayConnected(this.ctx.db, gateway.id, true,
        { publicAddress: hello.publicAddress, publicPort: hello.publicPort, version: hello.gatewayVersion }),
    );
    void this.currentRetentions().then((retentions) => {
      if (this.ended) return;
      this.write({ body: 'welcome', welcome: {
        hubProof: hubProof(gateway.token_sha256, hello.nonce ?? Buffer.alloc(0)),
        heartbeatIntervalMs,
        ticketPublicKey: this.ctx.ticketPublicKey ?? Buffer.alloc(0),
        retentions,
      } });
      const held = this.heldRetentions ?? [];
      this.heldRetentions = undefined;
      for (const message of held) this.write(message);
      void this.sendMetricsSettings();
      this.timers.push(setInterval(() => this.write({ body: 'heartbeat', heartbeat: { sentAtMs: Date.now() } }), heartbeatIntervalMs));
    });
  }

  /**
   * Stores a metrics batch (after the record writes that came before it, so its devices' rows exist; in its own
   * lane, so the batches never queue ahead of a device's state), then acknowledges it: the ack is the gateway's
   * backpressure. No ack while the database is unreachable.
   */
  private onMetrics(batch: MetricsBatch): void {
    const receiver = this.metricsReceiver;
    void this.ctx.enqueueWrite(this.ctx.gateway.id, async () => {
      const sequence = receiver ? await receiver.receive(batch) : Number(batch.sequence);
      this.write({ body: 'metricsAck', metricsAck: { sequence } });
    }, 'metrics');
  }

  /** MetricsSettings: after Welcome, and whenever a device's passive logging is switched. */
  async sendMetricsSettings(): Promise<void> {
    if (!this.metricsReceiver) return;
    try {
      this.write({ body: 'metricsSettings', metricsSettings: await this.metricsReceiver.settings() });
    } catch (err) {
      this.ctx.logger.warn({ gateway: this.gatewayName, err }, 'could not send metrics settings');
    }
  }

  /** A device of this gateway was retained (`retainId`) or released (''). */
  sendRetention(retention: Retention): void {
    this.sendRetentionOrdered({ body: 'retention', retention });
  }

  /** A Retention, or an AccessSync that must follow every Retention before it. */
  private sendRetentionOrdered(message: Extract<HubMessage, { body: 'retention' | 'accessSync' }>): void {
    if (this.heldRetentions) this.heldRetentions.push(message);
    else this.write(message);
  }

  /** Asks the gateway to open a relayed connection into a device's access endpoint (it calls Tunnel). */
  openTunnel(request: OpenTunnel): void {
    this.write({ body: 'openTunnel', openTunnel: request });
  }

  /**
   * The port of the device's access endpoint for this retain (undefined: none / no answer in time). Known at once
   * when the gateway has answered an earlier Retention of the device with a port: an endpoint keeps its port from
   * retain to retain while its device stays, and a client that connects is checked only once the gateway has
   * every Retention sent before it (AccessSync), this retain's included (gateway access/adb-access-endpoints.ts).
   * Otherwise, and always when `confirmed`, once the gateway has answered this very retain. A timeout of 0 or less
   * answers only what the hub knows now, without waiting a turn of the event loop for the gateway.
   */
  accessPort(vendorUniqueIdentifier: string, retainId: string, timeoutMs: number, confirmed = false): Promise<number | undefined> {
    const known = this.accessEndpoints.get(vendorUniqueIdentifier);
    if (known?.retainId === retainId) return Promise.resolve(known.port || undefined);
    if (!confirmed && known && known.port > 0) return Promise.resolve(known.port);
    if (this.ended || timeoutMs <= 0) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const waiter = {
        endpoint: { vendorUniqueIdentifier, retainId },
        resolve: (port: number | undefined) => {
          clearTimeout(timer);
          this.accessWaiters = this.accessWaiters.filter((w) => w !== waiter);
          resolve(port);
        },
      };
      const timer = setTimeout(() => waiter.resolve(undefined), timeoutMs);
      this.accessWaiters.push(waiter);
    });
  }

  private onAccessEndpoint(endpoint: AccessEndpoint): void {
    const vuid = endpoint.vendorUniqueIdentifier;
    if (endpoint.retainId || endpoint.port > 0) this.accessEndpoints.set(vuid, endpoint);
    else this.accessEndpoints.delete(vuid);
    for (const waiter of [...this.accessWaiters]) {
      if (waiter.endpoint.vendorUniqueIdentifier === endpoint.vendorUniqueIdentifier && waiter.endpoint.retainId === endpoint.retainId) {
        waiter.resolve(endpoint.port || undefined);
      }
    }
  }

  /** A connection into a device was opened or refused: a Note event on the device, so its history shows who came in. */
  private onAccessEvent(event: DeviceAccessEvent): void {
    this.recordWrite(() => recordGatewayDeviceEvent(this.ctx.db, this.ctx.gateway.id, {
      vendorUniqueIdentifier: event.vendorUniqueIdentifier, eventType: 'Note', message: event.message,
      detail: event.fingerprint ? `key ${event.fingerprint}` : '', isSuccess: event.accepted, atMs: Number(event.atMs),
    }));
  }

  /** The retains of this gateway's devices now; none when the records store cannot say (tickets then wait). */
  private async currentRetentions(): Promise<Retention[]> {
    try {
      return await gatewayRetentions(this.ctx.db, this.ctx.gateway.id);
    } catch (err) {
      this.ctx.logger.warn({ gateway: this.gatewayName, err }, 'could not read retains for Welcome');
      return [];
    }
  }

  /** A full inventory: upsert every device, then everything else this gateway had goes Offline. */
  private onSnapshot(devices: DeviceState[]): void {
    this.devices.clear();
    for (const device of devices) this.devices.add(device.vendorUniqueIdentifier);
    const keep = devices.map((d) => d.vendorUniqueIdentifier);
    this.recordWrite(async () => {
      for (const device of devices) await applyDeviceState(this.ctx.db, this.ctx.gateway.id, device);
      await takeDevicesOffline(this.ctx.db, { gatewayId: this.ctx.gateway.id, keep, detail: 'Not reported by its gateway' });
    });
  }

  /**
   * A command's result. When it carries the device's new state (install, uninstall, readPackages), the state is
   * recorded first, behind this gateway's earlier reports, and only then is the command answered: whoever reads
   * the device after the call returns reads the change.
   */
  private onCommandResult(result: CommandResult): void {
    const state = result.device;
    if (!state?.vendorUniqueIdentifier) {
      this.answerCommand(result);
      return;
    }
    this.devices.add(state.vendorUniqueIdentifier);
    void this.ctx.enqueueWrite(this.ctx.gateway.id, async () => {
      await applyDeviceState(this.ctx.db, this.ctx.gateway.id, state);
    }).then(() => this.answerCommand(result));
  }

  private answerCommand(result: CommandResult): void {
    const command = this.pending.get(result.commandId);
    if (!command) return; // timed out already, or not ours
    this.pending.delete(result.commandId);
    clearTimeout(command.timer);
    command.resolve(result);
  }

  private checkLiveness(): void {
    const silentFor = Date.now() - this.lastMessageAt;
    if (silentFor > MISSED_HEARTBEATS_LIMIT * this.ctx.heartbeatIntervalMs) {
      this.end(`no message for ${silentFor} ms`, { status: { code: grpc.status.UNAVAILABLE, details: 'heartbeat timeout' } });
    }
  }

  /** Queues a record write; a failed write is logged and does not end the session. */
  private recordWrite(write: () => Promise<unknown>): void {
    void this.ctx.enqueueWrite(this.ctx.gateway.id, async () => {
      await write();
    });
  }

  private write(message: HubMessage): void {
    if (this.ended) return;
    try {
      this.ctx.call.write(message);
    } catch (err) {
      this.end(`write failed: ${(err as Error).message}`);
    }
  }

  private closeCall(status: Partial<grpc.StatusObject> | undefined): void {
    const { call } = this.ctx;
    if (call.cancelled || call.writableEnded || call.destroyed) return;
    try {
      if (status) call.emit('error', status); // grpc-js: sets the call's status and ends it
      else call.end();
    } catch {
      // the transport is already gone
    }
  }
}

/** What of a USB hub report the dashboard shows as state: which ports, their modes and flags (not currents). */
function portStates(hubs: UsbHubReport[]): string {
  return JSON.stringify(hubs.map((hub) => [hub.serialNumber, hub.isErrored,
    (hub.ports ?? []).map((port) => [port.portNumber, port.state, port.flags, port.deviceSerialNumber])]));
}
