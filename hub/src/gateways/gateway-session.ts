/**
 * One connected gateway: its Connect stream after authentication. Answers Hello with Welcome, hands every later
 * message to the channel that owns its kind (channels/index.ts), heartbeats, and ends the session on stream loss
 * or three heartbeat intervals of silence, taking the gateway's devices Offline. Writes to the records go through
 * the gateway's write queue, in arrival order.
 */
import * as grpc from '@grpc/grpc-js';
import type { GatewayMessage, Hello, HubMessage, MessageHandlers, UsbHubReport, Welcome } from '@devicelab/proto';
import type { Logger } from '@devicelab/shared';
import type { Db } from '../store/database';
import type { GatewayRow } from '../store/schema';
import { setGatewayConnected, takeDevicesOffline } from './device-inventory';
import type { ConnectedGateway } from './gateway-directory';
import { hubProof } from './gateway-tokens';
import type { ChannelMessage, HubChannel, SessionChannel } from './link/channel';
import { HeldDevices, type SessionTable } from './link/session-table';
import type { GatewayWriteQueue } from './link/write-queue';

/** Heartbeat silence longer than this many intervals ends the session (devicelab_link.proto). */
const MISSED_HEARTBEATS_LIMIT = 3;

export type ConnectCall = grpc.ServerDuplexStream<GatewayMessage, HubMessage>;

interface GatewaySessionContext {
  db: Db;
  gateway: GatewayRow;
  call: ConnectCall;
  heartbeatIntervalMs: number;
  logger: Logger;
  writes: GatewayWriteQueue;
  /** Where the devices the gateway reports are indexed once the session is established. */
  sessions: SessionTable<GatewaySession>;
  channels: readonly HubChannel[];
  /** Hello accepted: the registry makes this the gateway's session (replacing an older one). */
  onEstablished(session: GatewaySession): void;
  onEnded(session: GatewaySession): void;
}

export class GatewaySession {
  readonly connectedAt = new Date();
  /** Devices this gateway currently reports (any readiness): commands for them route here. */
  readonly devices: HeldDevices;
  /** The gateway's USB hubs as last reported (live state for GET /Gateway, not a record). */
  usbHubs: UsbHubReport[] = [];
  private hello?: Hello;
  private lastMessageAt = Date.now();
  private readonly timers: NodeJS.Timeout[] = [];
  private ended = false;
  /** Settles once the gateway's stream is gone (closed or cancelled), even after the session ended for another reason. */
  readonly streamGone: Promise<void>;
  private readonly channels: SessionChannel[];
  private readonly handlers: MessageHandlers<ChannelMessage> = {};

  constructor(private readonly ctx: GatewaySessionContext) {
    this.devices = new HeldDevices(ctx.sessions, this);
    this.streamGone = new Promise((resolve) => {
      ctx.call.once('close', resolve);
      ctx.call.once('cancelled', resolve);
    });
    this.channels = ctx.channels.map((channel) => channel.open?.(this) ?? {});
    for (const channel of this.channels) {
      for (const [body, handle] of Object.entries(channel.messages ?? {})) {
        if (body in this.handlers) throw new Error(`two link channels handle '${body}'`);
        Object.assign(this.handlers, { [body]: handle });
      }
    }
  }

  get gateway(): GatewayRow {
    return this.ctx.gateway;
  }

  get gatewayName(): string {
    return this.ctx.gateway.name;
  }

  get gatewayId(): string {
    return this.ctx.gateway.id;
  }

  /** How long the gateway has sent nothing (its heartbeats keep this under one interval while it runs). */
  get silentForMs(): number {
    return Date.now() - this.lastMessageAt;
  }

  /** True once the session ended (nothing more is sent or received). */
  get isEnded(): boolean {
    return this.ended;
  }

  /** The records store lost some of this gateway's reports: record it connected and ask for a fresh snapshot. */
  resync(): void {
    const hello = this.hello;
    if (this.ended || !hello) return;
    void this.recordWrite(() => setGatewayConnected(this.ctx.db, this.gatewayId, true,
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
      id: this.gatewayId,
      name: this.gatewayName,
      publicAddress: this.hello?.publicAddress ?? '',
      publicPort: this.hello?.publicPort ?? 0,
      version: this.hello?.gatewayVersion ?? '',
      connectedAt: this.connectedAt,
      deviceVendorUniqueIdentifiers: [...this.devices],
      usbHubs: this.usbHubs,
    };
  }

  /**
   * Ends the session; `replaced` when a newer connection of the same gateway took over. `hubStopping`: work
   * waiting on the gateway gets no answer, so async jobs stay running for the next start to reconcile with the
   * device (the gateway goes on with them). Idempotent.
   */
  end(reason: string, options: {
    replaced?: boolean; hubStopping?: boolean; status?: grpc.StatusObject | Partial<grpc.StatusObject>;
  } = {}): void {
    if (this.ended) return;
    this.ended = true;
    for (const timer of this.timers) clearInterval(timer);
    for (const channel of this.channels) channel.ended?.({ reason, hubStopping: options.hubStopping ?? false });
    this.ctx.logger.info({ gateway: this.gatewayName, reason }, 'gateway session ended');
    this.closeCall(options.status);
    // A session a newer connection replaced takes nothing Offline: the new one's snapshot reconciles, without a flap.
    if (!options.replaced && this.hello) {
      const gatewayId = this.gatewayId;
      void this.recordWrite(async () => {
        await takeDevicesOffline(this.ctx.db, { gatewayId, detail: `Gateway disconnected: ${reason}` });
        await setGatewayConnected(this.ctx.db, gatewayId, false, undefined, this.usbHubs);
      });
    }
    this.ctx.onEnded(this); // behind the Offline write: the link lock is freed only once it has landed
  }

  /**
   * Queues a write of this gateway's records behind its earlier ones; resolves with whether it landed (a failed
   * write is logged, the session goes on).
   */
  recordWrite(write: () => Promise<unknown>): Promise<boolean> {
    return this.ctx.writes.enqueue(this.gatewayId, write);
  }

  write(message: HubMessage): void {
    if (this.ended) return;
    try {
      this.ctx.call.write(message);
    } catch (err) {
      this.end(`write failed: ${(err as Error).message}`);
    }
  }

  private onMessage(message: GatewayMessage): void {
    if (this.ended) return;
    this.lastMessageAt = Date.now();
    if (!this.hello && message.body !== 'hello') {
      this.end('message before Hello', { status: { code: grpc.status.FAILED_PRECONDITION, details: 'Hello must come first' } });
      return;
    }
    if (message.body === 'hello') return this.onHello(message.hello);
    if (message.body === 'heartbeat') return;
    const handle = this.handlers[message.body] as ((payload: unknown) => void) | undefined;
    handle?.((message as Record<string, unknown>)[message.body]);
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
    // Established first, so what the channels read for Welcome misses nothing: changes meanwhile follow it.
    this.ctx.onEstablished(this);
    void this.recordWrite(() =>
      setGatewayConnected(this.ctx.db, gateway.id, true,
        { publicAddress: hello.publicAddress, publicPort: hello.publicPort, version: hello.gatewayVersion }),
    );
    void Promise.all(this.channels.map((channel) => channel.welcome?.() ?? {})).then((parts) => {
      if (this.ended) return;
      const welcome: Welcome = Object.assign({
        hubProof: hubProof(gateway.token_sha256, hello.nonce ?? Buffer.alloc(0)), heartbeatIntervalMs,
      }, ...parts);
      this.write({ body: 'welcome', welcome });
      for (const channel of this.channels) channel.welcomed?.();
      this.timers.push(setInterval(() => this.write({ body: 'heartbeat', heartbeat: { sentAtMs: Date.now() } }), heartbeatIntervalMs));
    }, (err: unknown) => {
      this.ctx.logger.error({ err, gateway: this.gatewayName }, 'could not prepare Welcome');
      this.end('could not prepare Welcome', { status: { code: grpc.status.UNAVAILABLE, details: 'hub could not prepare Welcome' } });
    });
  }

  private checkLiveness(): void {
    const silentFor = Date.now() - this.lastMessageAt;
    if (silentFor > MISSED_HEARTBEATS_LIMIT * this.ctx.heartbeatIntervalMs) {
      this.end(`no message for ${silentFor} ms`, { status: { code: grpc.status.UNAVAILABLE, details: 'heartbeat timeout' } });
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
