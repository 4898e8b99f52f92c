/**
 * The hub side of the gateway link (gRPC, devicelab_link.proto): authenticates each call from its metadata,
 * keeps one session per gateway name (a newer connection replaces an older one), serves app blobs, and is the
 * GatewayDirectory the domain sends device commands through.
 */
import * as grpc from '@grpc/grpc-js';
import {
  AUTHORIZATION_METADATA,
  GATEWAY_NAME_METADATA,
  gatewayLinkService,
  type BlobChunk,
  type BlobRequest,
  type CommandAction,
  type CommandResult,
  type Retention,
  type TunnelFrame,
} from '@devicelab/proto';
import { randomUUID } from 'node:crypto';
import { createLogger, type Logger } from '@devicelab/shared';
import { BlobGoneError, type BlobStore } from '../apps/blob-store';
import type { MetricsStore } from '../metrics/metrics-store';
import { PostgresMetricsStore } from '../metrics/postgres-metrics-store';
import { isDatabaseUnavailable, type Db } from '../store/database';
import type { GatewayRow } from '../store/schema';
import { LinkOwnership } from '../fleet/link-ownership';
import { settleOrphanedGateways } from '../fleet/orphaned-gateways';
import { setGatewayConnected, takeDevicesOffline } from './device-inventory';
import {
  GatewayUnavailableError, type ConnectedGateway, type DeviceTunnel, type GatewayDirectory,
} from './gateway-directory';
import { GatewaySession, type ConnectCall, type WriteLane } from './gateway-session';
import { authenticateGateway } from './gateway-tokens';
import { refuseSecondLiveLink } from './duplicate-links';
import { InventoryResync } from './inventory-resync';

/**
 * Three silent intervals end a session, so this is how long a busy gateway (event loop stalled by a burst of
 * device work) is tolerated. A gateway that dies is not waited for: its TCP connection closes and the stream
 * ends the session at once; the heartbeat only catches a hung process or a silent network.
 */
const DEFAULT_HEARTBEAT_INTERVAL_MS = 5_000;
/**
 * FetchBlob message size: well under gRPC's 4 MiB receive limit; 4x fewer messages than 64 KiB (per-message cost
 * bounded serving under load), while a call's write queue (16 messages before write() asks to wait) stays 4 MiB.
 */
export const BLOB_CHUNK_BYTES = 256 * 1024;
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
  /** Whether a gateway linked to this replica reports the device / the USB hub now. */
  holdsDevice(vendorUniqueIdentifier: string): boolean;
  holdsUsbHub(serialNumber: string): boolean;
  /** Resolves once the records writes queued so far for the gateway holding this device or hub have landed. */
  recorded(vendorUniqueIdentifierOrHubSerial: string): Promise<void>;
  /** Ends every session (their devices go Offline), then shuts the server down. */
  stop(): Promise<void>;
}

export async function startLinkServer(options: LinkServerOptions): Promise<LinkServer> {
  const { db, blobs } = options;
  const logger = options.logger ?? createLogger('link');
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS;
  const sessions = new Map<string, GatewaySession>();
  const writeQueues = new Map<string, Promise<void>>();
  const metrics = options.metrics ?? new PostgresMetricsStore(db, { logger });

  const resync = new InventoryResync({
    db, logger, probeIntervalMs: options.recordsProbeMs,
    resync: (gatewayId) => {
      const session = [...sessions.values()].find((s) => s.gatewayId === gatewayId);
      if (session) {
        session.resync();
        return;
      }
      void enqueueWrite(gatewayId, async () => {
        await takeDevicesOffline(db, { gatewayId, detail: 'Gateway disconnected while the records store was away' });
        await setGatewayConnected(db, gatewayId, false);
      });
    },
  });

  /**
   * Serialises one gateway's record writes across its sessions, so an old session's Offline lands first. Metrics
   * batches have a queue of their own: each waits for the record writes queued before it (its devices' rows
   * exist) but none holds up a device's state behind it.
   */
  const enqueueWrite = (gatewayId: string, write: () => Promise<void>, lane: WriteLane = 'records'): Promise<void> => {
    const key = `${lane}/${gatewayId}`;
    const before = lane === 'records' ? writeQueues.get(key)
      : Promise.all([writeQueues.get(key), writeQueues.get(`records/${gatewayId}`)]);
    const next = (before ?? Promise.resolve())
      .then(write)
      .catch((err: unknown) => {
        if (isDatabaseUnavailable(err)) {
          // Logged once per outage and gateway; the writes that fail after it are covered by the same resync.
          if (resync.markOutOfSync(gatewayId)) {
            logger.warn({ gatewayId, err }, 'records store unavailable; the gateway inventory is recorded afresh once it is back');
          }
        } else {
          logger.error({ err, gatewayId }, 'gateway record write failed');
        }
      });
    writeQueues.set(key, next);
    void next.then(() => {
      if (writeQueues.get(key) === next) writeQueues.delete(key);
    });
    return next;
  };

  let stopping: Promise<void> | undefined;

  const sessionsOf = (gatewayId: string) => [...sessions.values()].filter((session) => session.gatewayId === gatewayId);
  const ownership = options.databaseUrl ? new LinkOwnership(options.databaseUrl, logger, (gatewayId) => {
    for (const session of sessionsOf(gatewayId)) {
      session.end('link lock lost', { status: { code: grpc.status.UNAVAILABLE, details: 'another hub replica owns this gateway now' } });
    }
  }, (gatewayId) => {
    for (const session of sessionsOf(gatewayId)) session.resync();
  }) : undefined;

  // Gateways still recorded connected whose link no replica holds (this replica's previous run, a dead replica):
  // their devices go Offline. A gateway linked to another live replica is left alone.
  await settleOrphanedGateways(db, 'Gateway not connected since hub start');

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
        if (call.cancelled || refuseSecondLiveLink(sessions.get(gateway.name), call, heartbeatIntervalMs, logger)) return;
        return own(gateway, call).then((owned) => {
          if (!owned) return;
          const session: GatewaySession = new GatewaySession({
            db,
            gateway,
            call,
            heartbeatIntervalMs,
            logger,
            enqueueWrite,
            ticketPublicKey: options.ticketPublicKey,
            metrics,
            onEstablished: (established) => {
              const previous = sessions.get(gateway.name);
              sessions.set(gateway.name, established);
              previous?.end('replaced by a newer connection', {
                replaced: true,
                status: { code: grpc.status.ABORTED, details: 'replaced by a newer connection of this gateway' },
              });
            },
            onEnded: (ended) => {
              if (sessions.get(gateway.name) === ended) sessions.delete(gateway.name);
              // Freed only behind the session's last writes, so its Offline never lands after another replica's Online.
              if (ownership) void enqueueWrite(gateway.id, async () => undefined).then(() => ownership.release(gateway.id));
            },
          });
          session.start();
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

  /** Tunnels asked for (OpenTunnel sent), waiting for their gateway's Tunnel call. */
  const pendingTunnels = new Map<string, {
    gatewayName: string; resolve(tunnel: DeviceTunnel): void; reject(err: Error): void; timer: NodeJS.Timeout;
  }>();

  /** GatewayLink.Tunnel: the gateway's answer to OpenTunnel; its first frame names the tunnel. */
  const tunnel = (call: grpc.ServerDuplexStream<TunnelFrame, TunnelFrame>): void => {
    call.on('error', () => undefined);
    const refuse = (code: grpc.status, details: string) => call.emit('error', { code, details });
    // Paused at the first frame; the consumer resumes once it listens, so no frame is lost in between.
    const firstFrame = new Promise<TunnelFrame>((resolve) => call.once('data', (frame: TunnelFrame) => {
      call.pause();
      resolve(frame);
    }));
    void Promise.all([authenticateCall(db, call.metadata), firstFrame]).then(([gateway, frame]) => {
      const pending = pendingTunnels.get(frame.tunnelId ?? '');
      if (!gateway || !pending || pending.gatewayName !== gateway.name) {
        refuse(grpc.status.PERMISSION_DENIED, 'no such tunnel for this gateway');
        return;
      }
      pendingTunnels.delete(frame.tunnelId ?? '');
      clearTimeout(pending.timer);
      if (frame.error) {
        pending.reject(new GatewayUnavailableError(frame.error));
        call.end();
        return;
      }
      pending.resolve(call as unknown as DeviceTunnel);
    }, (err: unknown) => {
      logger.error({ err }, 'tunnel authentication failed');
      refuse(grpc.status.UNAVAILABLE, 'hub could not check credentials');
    });
  };

  const fetchBlob = (call: grpc.ServerWritableStream<BlobRequest, BlobChunk>): void => {
    void serveBlob(db, blobs, call, logger);
  };

  // A full snapshot carries every device's properties (500-1200 getprop keys) and packages: a lab of a few
  // dozen devices passes gRPC's 4 MiB default.
  const server = new grpc.Server({ 'grpc.max_receive_message_length': MAX_MESSAGE_BYTES });
  server.addService(gatewayLinkService, { Connect: connect, FetchBlob: fetchBlob, Tunnel: tunnel });
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

  const directory: GatewayDirectory = {
    sendCommand(vendorUniqueIdentifier, action, timeoutMs, onProgress): Promise<CommandResult> {
      for (const session of sessions.values()) {
        if (session.devices.has(vendorUniqueIdentifier)) return session.sendCommand(vendorUniqueIdentifier, action, timeoutMs, onProgress);
      }
      return Promise.reject(new GatewayUnavailableError(`No connected gateway holds device ${vendorUniqueIdentifier}.`));
    },
    connectedGateways(): ConnectedGateway[] {
      return [...sessions.values()].map((session) => session.describe());
    },
    sendUsbHubCommand(hubSerialNumber: string, action: CommandAction, timeoutMs: number): Promise<CommandResult> {
      for (const session of sessions.values()) {
        if (session.hasUsbHub(hubSerialNumber)) return session.sendCommand('', action, timeoutMs);
      }
      return Promise.reject(new GatewayUnavailableError(`No connected gateway reports USB hub ${hubSerialNumber}.`));
    },
    notifyRetention(retention: Retention): void {
      // Every gateway hears it, not only the one reporting the device now: a reconnected gateway reports its
      // devices a while after Welcome, and a device can move to another gateway. A retain id is no secret (a
      // ticket also needs the hub's signature), nor are public keys.
      for (const session of sessions.values()) session.sendRetention(retention);
    },
    async accessPort(vendorUniqueIdentifier: string, retainId: string, timeoutMs: number, confirmed?: boolean): Promise<number | undefined> {
      const session = [...sessions.values()].find((s) => s.devices.has(vendorUniqueIdentifier));
      return session?.accessPort(vendorUniqueIdentifier, retainId, timeoutMs, confirmed);
    },
    openTunnel(request, timeoutMs): Promise<DeviceTunnel> {
      const session = [...sessions.values()].find((s) => s.devices.has(request.vendorUniqueIdentifier));
      if (!session) {
        return Promise.reject(new GatewayUnavailableError(`No connected gateway holds device ${request.vendorUniqueIdentifier}.`));
      }
      const tunnelId = randomUUID();
      return new Promise<DeviceTunnel>((resolve, reject) => {
        const timer = setTimeout(() => {
          pendingTunnels.delete(tunnelId);
          reject(new GatewayUnavailableError(`Gateway ${session.gatewayName} did not open the tunnel within ${timeoutMs} ms.`));
        }, timeoutMs);
        pendingTunnels.set(tunnelId, { gatewayName: session.gatewayName, resolve, reject, timer });
        session.openTunnel({ ...request, tunnelId });
      });
    },
    notifyMetricsSettings(): void {
      for (const session of sessions.values()) void session.sendMetricsSettings();
    },
  };

  const holding = (target: string) => [...sessions.values()]
    .find((s) => s.devices.has(target) || s.hasUsbHub(target));
  return {
    port,
    directory,
    holdsDevice: (vendorUniqueIdentifier) => [...sessions.values()].some((s) => s.devices.has(vendorUniqueIdentifier)),
    holdsUsbHub: (serialNumber) => [...sessions.values()].some((s) => s.hasUsbHub(serialNumber)),
    async recorded(target) {
      const session = holding(target);
      if (session) await enqueueWrite(session.gatewayId, async () => undefined);
    },
    stop() {
      stopping ??= (async () => {
        resync.stop();
        for (const session of [...sessions.values()]) {
          session.end('hub stopping', { hubStopping: true, status: { code: grpc.status.UNAVAILABLE, details: 'hub stopping' } });
        }
        await Promise.all([...writeQueues.values()]);
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

/** The gateway named and proven by `authorization: Bearer <token>` and `x-devicelab-gateway: <name>`. */
async function authenticateCall(db: Db, metadata: grpc.Metadata): Promise<GatewayRow | undefined> {
  const name = metadata.get(GATEWAY_NAME_METADATA)[0];
  const authorization = metadata.get(AUTHORIZATION_METADATA)[0];
  if (typeof name !== 'string' || typeof authorization !== 'string') return undefined;
  const token = /^Bearer\s+(\S+)$/i.exec(authorization.trim())?.[1];
  return token ? authenticateGateway(db, name, token) : undefined;
}

/** Streams a blob in BLOB_CHUNK_BYTES chunks; total_size rides on the first (an empty blob is one empty chunk). */
async function serveBlob(
  db: Db,
  blobs: BlobStore,
  call: grpc.ServerWritableStream<BlobRequest, BlobChunk>,
  logger: Logger,
): Promise<void> {
  try {
    if (!(await authenticateCall(db, call.metadata))) {
      call.emit('error', { code: grpc.status.UNAUTHENTICATED, details: 'unknown gateway or wrong token' });
      return;
    }
    const sha256 = (call.request.sha256 ?? '').toLowerCase();
    const blob = await blobs.stat(sha256);
    if (!blob) {
      call.emit('error', { code: grpc.status.NOT_FOUND, details: `no blob ${sha256}` });
      return;
    }
    const totalSize = blob.size;
    let first = true;
    for await (const data of rechunk(blobs.read(blob), BLOB_CHUNK_BYTES)) {
      if (call.cancelled) return;
      const chunk: BlobChunk = { data, totalSize: first ? totalSize : 0 };
      first = false;
      if (!call.write(chunk)) await drainedOrCancelled(call);
    }
    if (call.cancelled) return;
    if (first) call.write({ data: Buffer.alloc(0), totalSize });
    call.end();
  } catch (err) {
    if (err instanceof BlobGoneError) {
      if (!call.cancelled) call.emit('error', { code: grpc.status.NOT_FOUND, details: err.message });
      return;
    }
    logger.error({ err }, 'FetchBlob failed');
    if (!call.cancelled) call.emit('error', { code: grpc.status.INTERNAL, details: 'could not read the blob' });
  }
}

/** Waits until the call can take more, or until the gateway went away (then no 'drain' would ever come). */
function drainedOrCancelled(call: grpc.ServerWritableStream<BlobRequest, BlobChunk>): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      call.off('drain', done);
      call.off('cancelled', done);
      resolve();
    };
    call.once('drain', done);
    call.once('cancelled', done);
  });
}

/** Re-cuts a byte stream into pieces of exactly `size` bytes (the last may be shorter), copying only across seams. */
async function* rechunk(source: AsyncIterable<Buffer>, size: number): AsyncGenerator<Buffer> {
  let carry: Buffer = Buffer.alloc(0);
  for await (const piece of source) {
    let offset = 0;
    if (carry.length > 0) {
      const take = Math.min(size - carry.length, piece.length);
      carry = Buffer.concat([carry, piece.subarray(0, take)]);
      offset = take;
      if (carry.length < size) continue;
      yield carry;
      carry = Buffer.alloc(0);
    }
    for (; offset + size <= piece.length; offset += size) yield piece.subarray(offset, offset + size);
    if (offset < piece.length) carry = Buffer.from(piece.subarray(offset));
  }
  if (carry.length > 0) yield carry;
}
