/**
 * The hub side of the gateway link (gRPC, devicelab_link.proto): authenticates each Connect call, takes the
 * gateway's link lock (one live link per gateway across the hub replicas), keeps one session per gateway name (a
 * newer connection replaces an older one), records gateways afresh after a records-store outage, and serves the
 * GatewayDirectory and the other gRPC calls through the link's channels (channels/index.ts).
 */
import * as grpc from '@grpc/grpc-js';
import { gatewayLinkService } from '@devicelab/proto';
import { createLogger, type Logger } from '@devicelab/shared';
import type { BlobStore } from '../apps/blob-store';
import type { MetricsStore } from '../metrics/metrics-store';
import { PostgresMetricsStore } from '../metrics/postgres-metrics-store';
import { isDatabaseUnavailable, type Db } from '../store/database';
import type { GatewayRow } from '../store/schema';
import { LinkOwnership } from '../fleet/link-ownership';
import { settleOrphanedGateways } from '../fleet/orphaned-gateways';
import { hubChannels } from './channels/index';
import { setGatewayConnected, takeDevicesOffline } from './device-inventory';
import type { GatewayDirectory } from './gateway-directory';
import { GatewaySession, type ConnectCall } from './gateway-session';
import { refuseSecondLiveLink } from './duplicate-links';
import { InventoryResync } from './inventory-resync';
import { authenticateCall } from './link/authenticate';
import type { ChannelContext, HubChannel } from './link/channel';
import { SessionTable } from './link/session-table';
import { GatewayWriteQueue } from './link/write-queue';

/**
 * Three silent intervals end a session, so this is how long a busy gateway (event loop stalled by a burst of
 * device work) is tolerated. A gateway that dies is not waited for: its TCP connection closes and the stream
 * ends the session at once; the heartbeat only catches a hung process or a silent network.
 */
const DEFAULT_HEARTBEAT_INTERVAL_MS = 5_000;
/** Largest message a gateway may send (inventory snapshots). */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

interface LinkServerTls {
  /** PEM certificate chain and private key of the hub. */
  cert: Buffer;
  key: Buffer;
  /** PEM CA bundle; when given, gateways must present client certificates signed by it. */
  ca?: Buffer;
}

interface LinkServerOptions {
  db: Db;
  blobs: BlobStore;
  /** 0 picks a free port (see `LinkServer.port`). */
  port: number;
  /** Bind address; default all interfaces. */
  host?: string;
  tls?: LinkServerTls;
  heartbeatIntervalMs?: number;
  /** SPKI DER of the key that signs DeviceAccessTicket authenticators; sent in Welcome. */
  ticketPublicKey?: Buffer;
  logger?: Logger;
  /** Told of each connection opened into a device's access endpoint (use that keeps a retain alive). */
  onDeviceUse?: (vendorUniqueIdentifier: string) => void;
  /** Where gateways' metrics batches are stored; default the PostgreSQL store on `db`. */
  metrics?: MetricsStore;
  /** While the records store is away, how often it is probed before gateway inventories are recorded afresh. */
  recordsProbeMs?: number;
  /**
   * The records database's URL: each link then holds its gateway's advisory lock on a connection of its own, so
   * a gateway has one live link across all replicas (fleet/link-ownership.ts). Without it links are not locked.
   */
  databaseUrl?: string;
}

export interface LinkServer {
  port: number;
  directory: GatewayDirectory;
  /** The gateway sessions of this replica (its `removed` event tells when one left). */
  sessions: SessionTable<GatewaySession>;
  /** Whether a gateway linked to this replica reports the device / the USB hub now. */
  holdsDevice(vendorUniqueIdentifier: string): boolean;
  holdsUsbHub(serialNumber: string): boolean;
  /** Resolves once the records writes queued so far for the gateway holding this device or hub have landed. */
  recorded(vendorUniqueIdentifierOrHubSerial: string): Promise<void>;
  /** Ends every session (their devices go Offline), then shuts the server down. */
  stop(): Promise<void>;
}

export async function startLinkServer(options: LinkServerOptions): Promise<LinkServer> {
  const { db } = options;
  const logger = options.logger ?? createLogger('link');
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS;
  const sessions = new SessionTable<GatewaySession>();

  const writes = new GatewayWriteQueue((gatewayId, err) => {
    if (isDatabaseUnavailable(err)) {
      // Logged once per outage and gateway; the writes that fail after it are covered by the same resync.
      if (resync.markOutOfSync(gatewayId)) {
        logger.warn({ gatewayId, err }, 'records store unavailable; the gateway inventory is recorded afresh once it is back');
      }
    } else {
      logger.error({ err, gatewayId }, 'gateway record write failed');
    }
  });
  const resync = new InventoryResync({
    db, logger, probeIntervalMs: options.recordsProbeMs,
    resync: (gatewayId) => {
      const [session] = sessions.ofGateway(gatewayId);
      if (session) {
        session.resync();
        return;
      }
      void writes.enqueue(gatewayId, async () => {
        await takeDevicesOffline(db, { gatewayId, detail: 'Gateway disconnected while the records store was away' });
        await setGatewayConnected(db, gatewayId, false);
      });
    },
  });

  let stopping: Promise<void> | undefined;

  const ownership = options.databaseUrl ? new LinkOwnership(options.databaseUrl, logger, (gatewayId) => {
    for (const session of sessions.ofGateway(gatewayId)) {
      session.end('link lock lost', { status: { code: grpc.status.UNAVAILABLE, details: 'another hub replica owns this gateway now' } });
    }
  }, (gatewayId) => {
    for (const session of sessions.ofGateway(gatewayId)) session.resync();
  }) : undefined;

  // Gateways still recorded connected whose link no replica holds (this replica's previous run, a dead replica):
  // their devices go Offline. A gateway linked to another live replica is left alone.
  await settleOrphanedGateways(db, 'Gateway not connected since hub start');

  const context: ChannelContext = {
    db, blobs: options.blobs, logger, sessions, writes, authenticate: (metadata) => authenticateCall(db, metadata),
    ticketPublicKey: options.ticketPublicKey, metrics: options.metrics ?? new PostgresMetricsStore(db, { logger }),
    onDeviceUse: options.onDeviceUse,
  };
  const channels = hubChannels(context);

  /** The link lock for a gateway that just authenticated; a refusal names the replica whose link holds it. */
  const own = async (gateway: GatewayRow, call: ConnectCall): Promise<boolean> => {
    if (!ownership) return true;
    if (await ownership.acquire(gateway.id)) {
      if (!call.cancelled && !stopping) return true;
      ownership.release(gateway.id);
      return false;
    }
    const owner = await db.selectFrom('gateways').select('hub_replica').where('id', '=', gateway.id).executeTakeFirst();
    call.emit('error', {
      code: grpc.status.ALREADY_EXISTS,
      details: `gateway ${gateway.name} has a live link on hub replica ${owner?.hub_replica ?? 'unknown'}`,
    });
    return false;
  };

  const startSession = (gateway: GatewayRow, call: ConnectCall): void => {
    new GatewaySession({
      db, gateway, call, heartbeatIntervalMs, logger, writes, sessions, channels,
      onEstablished: (established) => {
        sessions.establish(established)?.end('replaced by a newer connection', {
          replaced: true,
          status: { code: grpc.status.ABORTED, details: 'replaced by a newer connection of this gateway' },
        });
      },
      onEnded: (ended) => {
        sessions.remove(ended);
        // Freed only behind the session's last writes, so its Offline never lands after another replica's Online.
        if (ownership) void writes.recorded(gateway.id).then(() => ownership.release(gateway.id));
      },
    }).start();
  };

  const connect = (call: ConnectCall): void => {
    authenticateCall(db, call.metadata).then(
      (gateway) => {
        // A stopping hub takes no new session: it would report devices Online that nothing takes Offline again.
        if (stopping) {
          call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'hub stopping' });
          return;
        }
        if (!gateway) {
          call.emit('error', { code: grpc.status.UNAUTHENTICATED, details: 'unknown gateway or wrong token' });
          return;
        }
        if (call.cancelled || refuseSecondLiveLink(sessions.ofGateway(gateway.id)[0], call, heartbeatIntervalMs, logger)) return;
        return own(gateway, call).then((owned) => {
          if (owned) startSession(gateway, call);
        }).catch((err: unknown) => {
          logger.error({ err, gateway: gateway.name }, 'could not take the gateway link lock');
          call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'hub could not record the link' });
        });
      },
      (err: unknown) => {
        logger.error({ err }, 'gateway authentication failed');
        call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'hub could not check credentials' });
      },
    );
  };

  // A full snapshot carries every device's properties (500-1200 getprop keys) and packages: a lab of a few
  // dozen devices passes gRPC's 4 MiB default.
  const server = new grpc.Server({ 'grpc.max_receive_message_length': MAX_MESSAGE_BYTES });
  server.addService(gatewayLinkService, Object.assign({ Connect: connect }, ...channels.map((channel) => channel.methods ?? {})));
  const credentials = options.tls
    ? grpc.ServerCredentials.createSsl(
        options.tls.ca ?? null,
        [{ cert_chain: options.tls.cert, private_key: options.tls.key }],
        options.tls.ca !== undefined,
      )
    : grpc.ServerCredentials.createInsecure();
  const host = options.host ?? '0.0.0.0';
  const address = `${host.includes(':') ? `[${host}]` : host}:${options.port}`;
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(address, credentials, (err, bound) => (err ? reject(err) : resolve(bound)));
  });

  const holding = (target: string) => sessions.holding(target) ?? sessions.holdingUsbHub(target);
  return {
    port,
    directory: assembleDirectory(sessions, channels),
    sessions,
    holdsDevice: (vendorUniqueIdentifier) => sessions.holding(vendorUniqueIdentifier) !== undefined,
    holdsUsbHub: (serialNumber) => sessions.holdingUsbHub(serialNumber) !== undefined,
    async recorded(target) {
      const session = holding(target);
      if (session) await writes.recorded(session.gatewayId);
    },
    stop() {
      stopping ??= (async () => {
        resync.stop();
        for (const session of sessions.all()) {
          session.end('hub stopping', { hubStopping: true, status: { code: grpc.status.UNAVAILABLE, details: 'hub stopping' } });
        }
        await writes.drained();
        await ownership?.stop();
        await new Promise<void>((resolve) => {
          const force = setTimeout(() => {
            server.forceShutdown();
            resolve();
          }, 2_000);
          server.tryShutdown(() => {
            clearTimeout(force);
            resolve();
          });
        });
      })();
      return stopping;
    },
  };
}

/** The directory: the connected gateways from the session table, every other operation from the channel that owns it. */
export function assembleDirectory(sessions: SessionTable<GatewaySession>, channels: readonly HubChannel[]): GatewayDirectory {
  const directory: Partial<GatewayDirectory> = { connectedGateways: () => sessions.all().map((session) => session.describe()) };
  for (const channel of channels) {
    for (const [operation, answer] of Object.entries(channel.directory ?? {})) {
      if (operation in directory) throw new Error(`two link channels answer GatewayDirectory.${operation}`);
      Object.assign(directory, { [operation]: answer });
    }
  }
  return directory as GatewayDirectory;
}
