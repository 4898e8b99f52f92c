/**
 * The gateway's side of the link: dials the hub (`GatewayLink.Connect`), proves itself with its token in the
 * call metadata, checks the hub's proof in Welcome (drops impostors), heartbeats at the hub's interval, hands
 * every later hub message to the channel that owns its kind (channels/index.ts), and reconnects after any loss:
 * with several hub replicas, at once to the next one, round-robin (hub-rotation.ts). Any replica of the lab
 * passes the hub proof (it is keyed with the token's hash, which every replica reads from the shared database).
 *
 * Events: `connected` (Welcome verified, snapshot sent), `disconnected`, `hubRejected` (wrong hub proof),
 * `metricsSettings` (the hub's MetricsSettings: devices whose passive logging is off).
 */
import { EventEmitter } from 'node:events';
import * as grpc from '@grpc/grpc-js';
import {
  AUTHORIZATION_METADATA, GATEWAY_NAME_METADATA, type GatewayMessage, type HubMessage, type MessageHandlers, type Welcome,
} from '@devicelab/proto';
import type { Logger } from '@devicelab/shared';
import type { AdbAccessEndpoints } from '../access/adb-access-endpoints';
import type { IosTunnels } from '../access/hub-tunnel';
import type { AppCache } from '../apps/app-cache';
import type { DriverRegistry } from '../drivers/registry';
import type { UsbHubService } from '../usbhubs/usb-hub-service';
import { DEFAULT_BACKOFF, type BackoffOptions } from './backoff';
import type { ChannelHubMessage, GatewayChannel, HubConnection, LinkClient } from './channels/channel';
import { gatewayChannels, type GatewayChannels } from './channels/index';
import type { DeviceScreens } from '../screen/device-screens';
import { newNonce, verifyHubProof } from './hub-proof';
import { HubRotation, parseHubAddresses, type AttemptOutcome } from './hub-rotation';
import { createLinkClients, type HubLinkTls } from './link-clients';
import type { MetricsUplink } from './metrics-uplink';
import type { AutomationServers } from '../automation/automation-servers';

export const GATEWAY_VERSION = '0.1.0';
export type { HubLinkTls };

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
  usbmuxAccess?: IosTunnels;
  /** The devices' automation servers; undefined when automation is off. */
  automation?: AutomationServers;
  /** The devices' live screens, reached by screen tunnels. */
  screens?: DeviceScreens;
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
  /** The channels' handlers of this session's hub messages, once Welcome is verified. */
  handlers: MessageHandlers<ChannelHubMessage>;
}

const DEFAULT_HEARTBEAT_MS = 10_000;

export class HubLink extends EventEmitter {
  /** The link's capabilities: what the rest of the gateway sends through (inventory, access, ...). */
  readonly channels: GatewayChannels;
  /** One client per hub replica, in the order given. */
  private readonly clients: Map<string, LinkClient>;
  private readonly rotation: HubRotation;
  private readonly logger: Logger;
  private session: Session | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private stopped = true;
  /** Connection attempts that failed since the last verified session (for quieter logs while the hub is away). */
  private failedAttempts = 0;

  constructor(private readonly options: HubLinkOptions) {
    super();
    this.logger = options.logger;
    const addresses = typeof options.hubAddress === 'string' ? parseHubAddresses(options.hubAddress) : options.hubAddress;
    this.rotation = new HubRotation(addresses, options.backoff ?? DEFAULT_BACKOFF);
    this.clients = createLinkClients(this.rotation.addresses, options.tls);
    const connection: HubConnection = {
      send: (message) => this.send(message),
      metadata: () => this.metadata(),
      // Any replica answers FetchBlob; the current session's is the one known to answer.
      client: () => this.session?.hub.client ?? this.clients.get(this.rotation.current)!,
      emit: (event, ...args) => this.emit(event, ...args),
    };
    this.channels = gatewayChannels(connection, options);
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

  private get channelList(): GatewayChannel[] {
    // A channel with no session hooks (blobs) is one too; TypeScript's weak-type check would refuse it as such.
    return Object.values(this.channels) as unknown as GatewayChannel[];
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
      hub, call, verified: false, closed: false, timers: [], lastHubMessageAt: Date.now(), hubSendsHeartbeats: false, handlers: {},
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
        for (const channel of this.channelList) channel.down?.();
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
      this.onWelcome(session, message.welcome, lost);
      return;
    }
    if (message.body === 'heartbeat') {
      session.hubSendsHeartbeats = true;
      return;
    }
    const handle = session.handlers[message.body as ChannelHubMessage['body']] as ((payload: unknown) => void) | undefined;
    if (handle) handle((message as Record<string, unknown>)[message.body]);
    else this.logger.warn({ body: message.body }, 'unexpected message from the hub');
  }

  /** The hub is verified: heartbeats start, and each channel sends what goes up first and takes its messages. */
  private onWelcome(session: Session, welcome: Welcome, lost: (reason: string) => void): void {
    session.verified = true;
    clearTimeout(session.welcomeTimer);
    this.failedAttempts = 0;
    this.rotation.connected();
    this.startHeartbeats(session, welcome.heartbeatIntervalMs || DEFAULT_HEARTBEAT_MS, lost);
    const linkSession = { send: (message: GatewayMessage) => this.send(message, session), client: session.hub.client };
    for (const channel of this.channelList) {
      for (const [body, handle] of Object.entries(channel.open?.(linkSession, welcome) ?? {})) {
        if (body in session.handlers) throw new Error(`two link channels handle '${body}'`);
        Object.assign(session.handlers, { [body]: handle });
      }
    }
    this.logger.info({ hub: session.hub.address }, 'connected to the hub');
    this.emit('connected');
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

  private closeSession(session: Session): void {
    session.closed = true;
    for (const channel of this.channelList) channel.closed?.();
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
