/**
 * The gateway's side of the link: dials the hub (`GatewayLink.Connect`), proves itself with its token in the
 * call metadata, checks the hub's proof in Welcome (drops impostors), sends a full inventory snapshot then
 * deltas, heartbeats at the hub's interval, executes commands, and reconnects after any loss: with several hub
 * replicas, at once to the next one, round-robin (hub-rotation.ts). Any replica of the lab passes the hub proof
 * (it is keyed with the token's hash, which every replica reads from the shared database).
 *
 * Events: `connected` (Welcome verified, snapshot sent), `disconnected`, `hubRejected` (wrong hub proof),
 * `metricsSettings` (the hub's MetricsSettings: devices whose passive logging is off).
 */
import { EventEmitter } from 'node:events';
import * as grpc from '@grpc/grpc-js';
import {
  AUTHORIZATION_METADATA, GATEWAY_NAME_METADATA, GatewayLinkClient, type AccessEndpoint, type BlobChunk, type BlobRequest,
  type Command, type DeviceAccessEvent, type DeviceState, type GatewayMessage, type HubMessage, type Retention, type TunnelFrame,
} from '@devicelab/proto';
import type { Logger } from '@devicelab/shared';
import type { AdbAccessEndpoints } from '../access/adb-access-endpoints';
import { relayTunnel } from '../access/hub-tunnel';
import type { UsbmuxAccess } from '../access/usbmux-filter';
import type { AppCache } from '../apps/app-cache';
import type { DeviceListener } from '../drivers/device-driver';
import type { DriverRegistry } from '../drivers/registry';
import { TicketVerifier } from '../tickets/ticket-verifier';
import { DEFAULT_BACKOFF, type BackoffOptions } from './backoff';
import { CommandExecutor } from './command-executor';
import { newNonce, verifyHubProof } from './hub-proof';
import { HubRotation, parseHubAddresses, type AttemptOutcome } from './hub-rotation';
import type { MetricsUplink } from './metrics-uplink';
import type { UsbHubService } from '../usbhubs/usb-hub-service';

export const GATEWAY_VERSION = '0.1.0';

export interface HubLinkTls {
  /** PEM root certificate(s) to verify the hub; system roots when omitted. */
  ca?: Buffer;
  /** Client certificate and key (mutual TLS), optional. */
  cert?: Buffer;
  key?: Buffer;
  /** Name to verify in the hub's certificate when it differs from the dialled host (e.g. dialling an IP). */
  serverName?: string;
}

/** How much the hub may send ahead of what the gateway has read (per stream and per connection). */
const RECEIVE_WINDOW_BYTES = 8 * 1024 * 1024;

export interface HubLinkOptions {
  name: string;
  token: string;
  /** `host:port` of the hub's link server, or of each hub replica's (tried in turn). */
  hubAddress: string | readonly string[];
  publicAddress: string;
  publicPort: number;
  drivers: DriverRegistry;
  appCache: AppCache;
  logger: Logger;
  /** TLS when set; an insecure channel otherwise. */
  tls?: HubLinkTls;
  backoff?: BackoffOptions;
  /** How long to wait for Welcome after Hello. */
  welcomeTimeoutMs?: number;
  /** How long a FetchBlob may go without a chunk (or its end) while the gateway waits for one. */
  blobIdleTimeoutMs?: number;
  gatewayVersion?: string;
  /** Sends metric batches while a verified session is open and takes the hub's MetricsAcks. */
  metrics?: MetricsUplink;
  /** The gateway's USB hubs: their state goes up after every (re)connect and change; port commands come down. */
  usbHubs?: UsbHubService;
  /** The retainers' adb endpoints: opened and closed by Retention, the target of hub tunnels. */
  adbAccess?: AdbAccessEndpoints;
  /** iOS devices: hub tunnels reach a usbmux proxy that shows only the retained device. */
  usbmuxAccess?: { access: UsbmuxAccess; isIos(vendorUniqueIdentifier: string): boolean };
}

interface LinkClient extends grpc.Client {
  Connect(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<GatewayMessage, HubMessage>;
  FetchBlob(request: BlobRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<BlobChunk>;
  Tunnel(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<TunnelFrame, TunnelFrame>;
}

interface Session {
  /** The replica this session dialled (tunnels it opens go back to it). */
  hub: { address: string; client: LinkClient };
  call: grpc.ClientDuplexStream<GatewayMessage, HubMessage>;
  verified: boolean;
  closed: boolean;
  timers: NodeJS.Timeout[];
  /** Ends an attempt whose hub never answers Hello; cleared once Welcome is verified. */
  welcomeTimer?: NodeJS.Timeout;
  lastHubMessageAt: number;
  hubSendsHeartbeats: boolean;
}

const DEFAULT_HEARTBEAT_MS = 10_000;
/** A hub that sends nothing for this long while a download waits has stalled (a stuck database, a frozen replica). */
const DEFAULT_BLOB_IDLE_TIMEOUT_MS = 30_000;

export class HubLink extends EventEmitter implements DeviceListener {
  /** One client per hub replica, in the order given. */
  private readonly clients: Map<string, LinkClient>;
  private readonly rotation: HubRotation;
  private readonly executor: CommandExecutor;
  private readonly logger: Logger;
  /** Checks DeviceAccessTicket authenticators with what the hub sent (Welcome, Retention). */
  readonly tickets = new TicketVerifier();
  /** AccessSyncs sent and not answered yet, by id (each resolves once its answer's Retentions are applied). */
  private readonly accessSyncs = new Map<number, () => void>();
  private nextAccessSync = 1;
  private session: Session | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private stopped = true;
  /** Connection attempts that failed since the last verified session (for quieter logs while the hub is away). */
  private failedAttempts = 0;

  constructor(private readonly options: HubLinkOptions) {
    super();
    this.logger = options.logger;
    const credentials = options.tls
      ? grpc.credentials.createSsl(options.tls.ca ?? null, options.tls.key ?? null, options.tls.cert ?? null)
      : grpc.credentials.createInsecure();
    const addresses = typeof options.hubAddress === 'string' ? parseHubAddresses(options.hubAddress) : options.hubAddress;
    this.rotation = new HubRotation(addresses, options.backoff ?? DEFAULT_BACKOFF);
    this.clients = new Map(this.rotation.addresses.map((address) => [address, new GatewayLinkClient(address, credentials, {
      'grpc.keepalive_time_ms': 15_000,
      'grpc.keepalive_timeout_ms': 10_000,
      'grpc.keepalive_permit_without_calls': 1,
      'grpc.initial_reconnect_backoff_ms': 250,
      'grpc.max_reconnect_backoff_ms': 10_000,
      // HTTP/2's default 64 KiB receive window lets the hub send 64 KiB per round trip: on a loaded host (each
      // round trip waits for both processes to be scheduled) that, not PostgreSQL, bounded app downloads.
      'grpc-node.flow_control_window': RECEIVE_WINDOW_BYTES,
      ...(options.tls?.serverName ? { 'grpc.ssl_target_name_override': options.tls.serverName } : {}),
    }) as unknown as LinkClient]));
    this.executor = new CommandExecutor(
      options.drivers, options.appCache, (sha, announce) => this.fetchBlob(sha, announce), this.logger, (state) => this.deviceChanged(state), options.usbHubs,
    );
    options.usbHubs?.subscribe({
      report: (usbHubs) => this.send({ body: 'usbHubs', usbHubs }),
      event: (usbHubEvent) => this.send({ body: 'usbHubEvent', usbHubEvent }),
    });
  }

  /** True while a session with a verified hub is open. */
  get connected(): boolean {
    return this.session?.verified === true && !this.session.closed;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    const session = this.session;
    if (session) {
      this.closeSession(session);
      try {
        session.call.end();
      } catch {
        // already gone
      }
      session.call.cancel();
    }
    for (const client of this.clients.values()) client.close();
  }

  /** The hub address the current session dialled (or the next attempt will). */
  get hubAddress(): string {
    return this.session?.hub.address ?? this.rotation.current;
  }

  // DeviceListener: deltas go out only on a verified session (a reconnect sends a fresh snapshot anyway).
  deviceChanged(state: DeviceState): void {
    this.send({ body: 'deviceUpdate', deviceUpdate: state });
  }

  deviceRemoved(vendorUniqueIdentifier: string): void {
    this.send({ body: 'deviceRemoved', deviceRemoved: { vendorUniqueIdentifier } });
  }

  /**
   * The blob as a stream of chunks from the hub's FetchBlob (at most RECEIVE_WINDOW_BYTES in flight); `announce` hears
   * its whole size from the first chunk.
   */
  async *fetchBlob(sha256: string, announce?: (totalSize: number) => void): AsyncIterable<Buffer> {
    // Any replica serves any blob (they are in the shared database); the session's is the one known to answer.
    const stream = (this.session?.hub.client ?? this.clients.get(this.rotation.current)!).FetchBlob({ sha256 }, this.metadata());
    // The clock runs only while this waits for the hub, not while the consumer writes what it got (backpressure).
    const idleMs = this.options.blobIdleTimeoutMs ?? DEFAULT_BLOB_IDLE_TIMEOUT_MS;
    let stalled = false;
    let timer: NodeJS.Timeout | undefined;
    const waitForHub = () => {
      timer = setTimeout(() => { stalled = true; stream.cancel(); }, idleMs);
    };
    try {
      let first = true;
      waitForHub();
      for await (const chunk of stream as AsyncIterable<BlobChunk>) {
        clearTimeout(timer);
        if (first) announce?.(Number(chunk.totalSize));
        first = false;
        if (chunk.data && chunk.data.length > 0) yield Buffer.from(chunk.data);
        waitForHub();
      }
    } catch (err) {
      if (stalled) throw new Error(`the hub sent nothing for ${Math.round(idleMs / 1000)} s`);
      throw err;
    } finally {
      clearTimeout(timer);
      stream.cancel();
    }
  }

  private metadata(): grpc.Metadata {
    const metadata = new grpc.Metadata();
    metadata.set(AUTHORIZATION_METADATA, `Bearer ${this.options.token}`);
    metadata.set(GATEWAY_NAME_METADATA, this.options.name);
    return metadata;
  }

  private send(message: GatewayMessage, session = this.session): boolean {
    if (!session || !session.verified || session.closed) return false;
    try {
      session.call.write(message);
      return true;
    } catch (err) {
      this.logger.warn({ err }, 'writing to the hub failed');
      return false;
    }
  }

  private connect(): void {
    if (this.stopped) return;
    const nonce = newNonce();
    const hub = { address: this.rotation.current, client: this.clients.get(this.rotation.current)! };
    const call = hub.client.Connect(this.metadata());
    const session: Session = {
      hub, call, verified: false, closed: false, timers: [], lastHubMessageAt: Date.now(), hubSendsHeartbeats: false,
    };
    this.session = session;
    const lost = (reason: string, code?: grpc.status) => {
      if (session.closed) return;
      const wasVerified = session.verified;
      this.closeSession(session);
      call.cancel();
      if (this.stopped) return;
      if (code === grpc.status.UNAUTHENTICATED || code === grpc.status.PERMISSION_DENIED) {
        this.logger.error({ reason, hub: hub.address }, 'the hub refused this gateway (check its name and token)');
      } else if (wasVerified || this.failedAttempts === 0) {
        this.logger.warn({ reason, hub: hub.address }, 'link to the hub lost');
      } else {
        this.logger.debug({ reason }, 'hub still unreachable');
      }
      this.failedAttempts = wasVerified ? 0 : this.failedAttempts + 1;
      if (wasVerified) {
        this.options.metrics?.linkDown();
        this.emit('disconnected', reason);
      }
      // Another replica still owns this gateway's link (its session is ending): free in a moment.
      const ownerBusy = code === grpc.status.ALREADY_EXISTS || code === grpc.status.FAILED_PRECONDITION;
      this.scheduleReconnect(wasVerified ? 'lost' : ownerBusy ? 'ownerBusy' : 'failed');
    };
    session.welcomeTimer = setTimeout(() => lost('no Welcome from the hub in time'), this.options.welcomeTimeoutMs ?? 10_000);
    session.timers.push(session.welcomeTimer);
    call.on('data', (message: HubMessage) => this.onHubMessage(session, nonce, message, lost));
    call.on('error', (err: grpc.ServiceError) =>
      lost(`${err.code === undefined ? '' : `${grpc.status[err.code]}: `}${err.details ?? err.message}`, err.code));
    call.on('end', () => lost('the hub closed the stream'));
    call.write({
      body: 'hello',
      hello: {
        gatewayName: this.options.name,
        gatewayVersion: this.options.gatewayVersion ?? GATEWAY_VERSION,
        nonce,
        publicAddress: this.options.publicAddress,
        publicPort: this.options.publicPort,
      },
    });
  }

  private onHubMessage(session: Session, nonce: Buffer, message: HubMessage, lost: (reason: string) => void): void {
    if (session.closed) return;
    session.lastHubMessageAt = Date.now();
    if (!session.verified) {
      if (message.body !== 'welcome') {
        lost(`expected Welcome, got ${message.body}`);
        return;
      }
      if (!verifyHubProof(this.options.token, nonce, message.welcome.hubProof)) {
        this.logger.error({ hub: session.hub.address },
          'wrong hub: its Welcome proof does not match this gateway token; refusing its commands');
        this.emit('hubRejected');
        lost('wrong hub proof');
        return;
      }
      session.verified = true;
      clearTimeout(session.welcomeTimer);
      this.tickets.welcome(message.welcome.ticketPublicKey, message.welcome.retentions ?? []);
      // Retains that ended while the link was down end their iOS connections too (the adb endpoints: replaceAll).
      this.options.usbmuxAccess?.access.keepOnly(message.welcome.retentions ?? []);
      const access = this.options.adbAccess;
      if (access) {
        void access.replaceAll(message.welcome.retentions ?? []).then((answers) => {
          for (const accessEndpoint of answers) this.send({ body: 'accessEndpoint', accessEndpoint }, session);
        });
      }
      this.failedAttempts = 0;
      this.rotation.connected();
      this.startHeartbeats(session, message.welcome.heartbeatIntervalMs || DEFAULT_HEARTBEAT_MS, lost);
      this.send({ body: 'snapshot', snapshot: { devices: this.options.drivers.snapshot() } }, session);
      if (this.options.usbHubs) {
        this.send({ body: 'usbHubs', usbHubs: this.options.usbHubs.resend() }, session);
        for (const usbHubEvent of this.options.usbHubs.takePendingEvents()) this.send({ body: 'usbHubEvent', usbHubEvent }, session);
      }
      this.options.metrics?.linkUp((batch) => this.send({ body: 'metrics', metrics: batch }, session));
      this.logger.info({ hub: session.hub.address }, 'connected to the hub');
      this.emit('connected');
      return;
    }
    switch (message.body) {
      case 'heartbeat':
        session.hubSendsHeartbeats = true;
        return;
      case 'command':
        void this.runCommand(session, message.command);
        return;
      case 'retention': {
        const vuid = message.retention.vendorUniqueIdentifier;
        this.tickets.apply(message.retention);
        this.options.usbmuxAccess?.access.retained(vuid, message.retention.retainId || undefined);
        this.applyAccess(session, message.retention);
        return;
      }
      case 'accessSync': {
        const done = this.accessSyncs.get(Number(message.accessSync.id));
        this.accessSyncs.delete(Number(message.accessSync.id));
        if (done) void (this.options.adbAccess?.applied() ?? Promise.resolve()).then(done);
        return;
      }
      case 'openTunnel': {
        if (!this.options.adbAccess && !this.options.usbmuxAccess) return;
        relayTunnel(message.openTunnel, {
          openCall: () => session.hub.client.Tunnel(this.metadata()), endpoints: this.options.adbAccess, tickets: this.tickets,
          ios: this.options.usbmuxAccess, report: (accessEvent) => this.accessEvent(accessEvent), logger: this.logger,
        });
        return;
      }
      case 'inventoryRequest':
        this.send({ body: 'snapshot', snapshot: { devices: this.options.drivers.snapshot() } }, session);
        return;
      case 'metricsAck':
        this.options.metrics?.acknowledged(message.metricsAck.sequence);
        return;
      case 'metricsSettings':
        this.emit('metricsSettings', message.metricsSettings);
        return;
      default:
        this.logger.warn({ body: message.body }, 'unexpected message from the hub');
    }
  }

  /** Opens, re-keys or closes the device's adb endpoint and tells the hub where it listens (or that it does not). */
  private applyAccess(session: Session, retention: Retention): void {
    const access = this.options.adbAccess;
    if (!access) {
      // No adb endpoints here: say so at once, or the hub's retain waits its whole endpoint deadline for an answer.
      const { vendorUniqueIdentifier, retainId } = retention;
      this.send({ body: 'accessEndpoint', accessEndpoint: { vendorUniqueIdentifier, retainId, port: 0 } }, session);
      return;
    }
    void access.apply(retention).then(
      (accessEndpoint) => this.send({ body: 'accessEndpoint', accessEndpoint }, session),
      (err: unknown) => this.logger.error({ err, device: retention.vendorUniqueIdentifier }, 'could not apply a retention'),
    );
  }

  /** A connection to a device's access endpoint was opened or refused (a Note event at the hub). */
  accessEvent(accessEvent: DeviceAccessEvent): void {
    this.send({ body: 'accessEvent', accessEvent });
  }

  /**
   * Resolves once every Retention the hub had sent when it read this request is applied here: the hub answers an
   * AccessSync behind them on the same stream. At once without a verified session (what is known here decides).
   */
  syncAccess(): Promise<void> {
    const id = this.nextAccessSync++;
    return new Promise((resolve) => {
      this.accessSyncs.set(id, resolve);
      if (!this.send({ body: 'accessSync', accessSync: { id } })) {
        this.accessSyncs.delete(id);
        resolve();
      }
    });
  }

  /** A device's adb endpoint closed on its own (the device left while not retained): the hub forgets its port. */
  accessEndpointClosed(accessEndpoint: AccessEndpoint): void {
    this.send({ body: 'accessEndpoint', accessEndpoint });
  }

  private startHeartbeats(session: Session, intervalMs: number, lost: (reason: string) => void): void {
    session.timers.push(setInterval(() => {
      this.send({ body: 'heartbeat', heartbeat: { sentAtMs: Date.now() } }, session);
      // A hub that sends heartbeats and then falls silent for three intervals is gone.
      if (session.hubSendsHeartbeats && Date.now() - session.lastHubMessageAt > 3 * intervalMs) {
        lost('three hub heartbeats missed');
      }
    }, intervalMs));
  }

  private async runCommand(session: Session, command: Command): Promise<void> {
    const result = await this.executor.execute(command, (percent) =>
      this.send({ body: 'commandProgress', commandProgress: { commandId: command.commandId, percent } }, session));
    if (!this.send({ body: 'commandResult', commandResult: result }, session)) {
      this.logger.warn({ command: command.commandId }, 'command finished after the link was lost; result dropped');
      // The device changed all the same: a later session (a restarted hub) records its new state.
      if (result.device) this.deviceChanged(result.device);
    }
  }

  private closeSession(session: Session): void {
    session.closed = true;
    // Their answers will not come: the clients waiting on them are checked against what is known here.
    for (const done of this.accessSyncs.values()) done();
    this.accessSyncs.clear();
    for (const timer of session.timers) clearTimeout(timer);
    session.timers = [];
    if (this.session === session) this.session = undefined;
  }

  private scheduleReconnect(outcome: AttemptOutcome): void {
    if (this.stopped || this.reconnectTimer) return;
    const delay = this.rotation.next(outcome);
    this.logger.info({ delayMs: delay, hub: this.rotation.current }, 'reconnecting to the hub');
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connect();
    }, delay);
  }
}
