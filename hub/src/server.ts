/**
 * Composition of the hub: records store, built-in accounts, app blob store, the gateway link (gRPC) and the
 * REST API (HTTP, or HTTPS when a certificate is configured). `startHub` is what `devicelab serve`, the demo
 * and the end-to-end tests run.
 */
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Express } from 'express';
import { createLogger, type Logger } from '@devicelab/shared';
import { BlobDiskCache } from './apps/blob-disk-cache';
import { BlobStore } from './apps/blob-store';
import { importDiskBlobs } from './apps/disk-blob-import';
import { PackageInspector } from './apps/package-inspector';
import { createApiApp } from './api/app';
import { attachWebSocketRoutes } from './http/websocket-upgrade';
import { DEVICE_CONNECT_PATH, deviceConnectSocket } from './api/device-connect-socket';
import { DEVICE_SCREEN_PATH, deviceScreenSocket } from './api/device-screen-socket';
import { appiumForwarding } from './api/appium-forward';
import { ScreenStills } from './domain/screen-stills';
import { ScreenViewers } from './domain/screen-viewers';
import { LoginThrottle } from './auth/login-throttle';
import { ChangeFeed } from './events/change-feed';
import { EventPublisher } from './events/event-publisher';
import { KeptReads } from './events/kept-reads';
import { sessionOrBasicAuth, webSessionRouter } from './http/web-session';
import { credentialChecker } from './http/basic-auth';
import type { AutomationContext } from './domain/automation/automation-sessions';
import { CommandTimes } from './domain/automation/command-times';
import { waitingLineClaim } from './domain/automation/device-claim';
import { KeptSessions } from './domain/automation/kept-sessions';
import { listWaiting, readFilter } from './domain/waiting-line';
import { startSessionSweeper } from './domain/automation/session-sweeper';
import { ensureBuiltInRolesAndAdmin } from './auth/users';
import { failInterruptedJobs } from './domain/async-jobs';
import { holdInterruptedJobs } from './domain/interrupted-jobs';
import { loadTicketKeys } from './domain/device-ticket';
import { recordServerStart } from './domain/events';
import { DEFAULT_BLOB_COPIES_MB, DEFAULT_KEPT_READS_LAG_MS, DEFAULT_PACKAGE_INSPECTION, DEFAULT_WEB_DIR, type HubConfig } from './config';
import { registerGateway } from './gateways/gateway-tokens';
import type { GatewayDirectory } from './gateways/gateway-directory';
import { startLinkServer, type LinkServer } from './gateways/link-server';
import { LockKind, withSessionLock } from './fleet/advisory-locks';
import { CommandRelay } from './fleet/command-relay';
import { startLabLeader } from './fleet/lab-leader';
import { LineServer } from './domain/line-server';
import { DeviceUseNotes } from './domain/device-use';
import { startLeaseSweeper } from './domain/lease-sweeper';
import { RemoteGateways } from './fleet/remote-gateways';
import { localExecutor, ReplicaDirectory } from './fleet/replica-directory';
import { beginReplicaRun } from './fleet/replica';
import { livePeersQuery, ReplicaRegistry } from './fleet/replica-registry';
import { currentRetentions } from './domain/device-access';
import { hubVersion } from './domain/service';
import { removeStaleUploads } from './http/upload';
import { startMetricsMaintenance } from './metrics/maintenance';
import { hubMetricsRegistry, timedGatewayDirectory } from './observability/hub-metrics';
import { startWebhookDelivery } from './webhooks/delivery-worker';
import { DEFAULT_RETENTION_DAYS, PostgresMetricsStore } from './metrics/postgres-metrics-store';
import type { Db } from './store/database';
import { openRecordsStore } from './store/open-records-store';
import { settingOrCreate } from './store/settings';
import { appMessageClasses } from './http/app-messages';
import { DEFAULT_REQUEST_DEADLINES, deadlineServerOptions, watchBodyPace } from './http/request-deadlines';

export interface RunningHub {
  /** Base URL of the REST API, e.g. `http://127.0.0.1:8080`. */
  url: string;
  port: number;
  linkPort: number;
  db: Db;
  gateways: GatewayDirectory;
  /** The built-in admin's token when this start created or set it (printed once), else undefined. */
  adminToken?: string;
  /** Creates a gateway record (or rotates its token) and returns the token the gateway authenticates with. */
  registerGateway(name: string): Promise<string>;
  stop(): Promise<void>;
}

interface StartHubOptions {
  /**
   * The embedded PostgreSQL died and could not be restarted: stop what you run and exit non-zero. Default: exit
   * with code 1 at once (a supervisor such as systemd then starts the hub again).
   */
  onRecordsStoreLost?: (err: Error) => void;
  /** The API's clock (retain and release times, job expiry, reports); the system clock by default. For tests. */
  clock?: () => Date;
}

export async function startHub(
  config: HubConfig,
  logger: Logger = createLogger('hub'),
  options: StartHubOptions = {},
): Promise<RunningHub> {
  beginReplicaRun();
  const store = await openRecordsStore({
    databaseUrl: config.databaseUrl, dataDir: config.dataDir, logger, onEmbeddedServerLost: options.onRecordsStoreLost,
  });
  const cleanups: (() => Promise<void>)[] = [() => store.stop()];
  const stop = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((err) => logger.error({ err }, 'stop failed'));
  };
  try {
    const { db } = store;
    // Live (its lock held) before anything below looks at other replicas' state, so it is never taken for dead.
    const registry = new ReplicaRegistry(db, store.url, hubVersion(), logger.child({ component: 'replicas' }));
    await registry.start();
    cleanups.push(() => registry.stop());
    const { adminToken } = await ensureBuiltInRolesAndAdmin(db, { adminToken: config.adminToken });
    // Jobs a process that is gone left running can never finish: an install is reconciled with the device once its
    // gateway reports it again; any other gets a failure for its pollers. Jobs of live replicas are left alone.
    await holdInterruptedJobs(db);
    await failInterruptedJobs(db);
    cleanups.push(await recordServerStart(db)); // ServerStarting (+ ServerRestarting after an unclean stop)
    const copiesMaxBytes = config.blobCopiesMaxBytes ?? DEFAULT_BLOB_COPIES_MB * 1024 * 1024;
    const copies = copiesMaxBytes > 0 ? new BlobDiskCache(path.join(config.dataDir, 'blob-copies'), copiesMaxBytes) : undefined;
    await copies?.removeUnfinished();
    const blobs = new BlobStore(db, copies);
    // Binaries an older hub kept on disk move into PostgreSQL, where every replica reads them.
    await importDiskBlobs(db, blobs, path.join(config.dataDir, 'blobs'), logger);
    // Uploads a killed process was receiving or reading are of no use to anyone now.
    const uploadTempDir = path.join(config.dataDir, 'uploads');
    await removeStaleUploads(uploadTempDir);
    const packages = new PackageInspector(config.packageInspection ?? DEFAULT_PACKAGE_INSPECTION, logger);
    cleanups.push(() => packages.stop());

    const linkTls = config.linkTlsCertFile && config.linkTlsKeyFile
      ? { cert: await fs.readFile(config.linkTlsCertFile), key: await fs.readFile(config.linkTlsKeyFile) }
      : undefined;
    const ticketKeys = await loadTicketKeys(db);
    const retentionDays = config.metricsRetentionDays ?? DEFAULT_RETENTION_DAYS;
    const metrics = new PostgresMetricsStore(db, { logger, retentionDays, maxQueryRows: config.metricsMaxRows });
    cleanups.push(await startMetricsMaintenance(metrics, {
      retentionDays, logger, db, shouldRun: () => registry.isLeader,
      exclusive: (pass) => withSessionLock(store.url, LockKind.maintenance, pass),
    }));
    const clock = options.clock ?? (() => new Date());
    const deviceUse = new DeviceUseNotes(db, clock, logger);
    const link = await startLinkServer({
      db, blobs, port: config.linkPort, host: config.host, tls: linkTls, logger, ticketPublicKey: ticketKeys.publicKeyDer,
      metrics, databaseUrl: store.url, onDeviceUse: (device) => deviceUse.note(device),
    });
    cleanups.push(() => link.stop());
    cleanups.push(startLabLeader(db, registry, logger.child({ component: 'leader' })));

    cleanups.push(startWebhookDelivery(db, logger.child({ component: 'webhooks' }), config.webhookDelivery));
    const feed = new ChangeFeed(db, store.url, logger);
    await feed.start();
    cleanups.push(() => feed.stop());
    // Subscribed before anything else hears the feed: a client told of a change reads it.
    const kept = new KeptReads(store.url, logger.child({ component: 'kept-reads' }), config.keptReadsLagMs ?? DEFAULT_KEPT_READS_LAG_MS,
      livePeersQuery(db, registry.replica.id));
    await kept.start(feed);
    cleanups.push(() => kept.stop());
    const directory = await replicaDirectory(db, registry, link, feed, logger);
    cleanups.push(async () => directory.stop());
    const gateways = timedGatewayDirectory(directory);
    const dataPortState = config.dataPortState ?? 'Data';
    const events = new EventPublisher(feed, { db, gateways: directory, dataPortState, logger });
    const waitingLine = new LineServer(db, {
      replicaId: () => registry.replica.id, isLeader: () => registry.isLeader, now: clock,
      logger: logger.child({ component: 'waiting-line' }), gateways: directory,
    });
    waitingLine.start(feed);
    registry.onRelayNotification((payload) => waitingLine.heard(payload));
    cleanups.push(() => waitingLine.stop());
    cleanups.push(startLeaseSweeper(db, {
      isLeader: () => registry.isLeader, now: clock, logger: logger.child({ component: 'leases' }), gateways: directory,
    }));
    // One throttle for Basic auth and the dashboard's sign-in form: guessing through either counts alike.
    const throttle = new LoginThrottle();
    // The live screen's viewers, shared by the WebSocket that adds them and the routes that list and end them.
    const screen = { viewers: new ScreenViewers(), stills: new ScreenStills(db, directory) };
    const automation: AutomationContext = {
      db, gateways, automation: directory, sessions: new KeptSessions(db, kept), clock, logger: logger.child({ component: 'automation' }),
      claim: waitingLineClaim({ db, gateways, ticketKeys, clock, waitingLine }),
      parseFilter: (text) => readFilter(text, 'devicelab:filter'),
    };
    const commandTimes = new CommandTimes(db, automation.logger);
    cleanups.push(() => commandTimes.stop());
    // The lab leader's tick keeps isLeader current; each replica sweeps the sessions of devices its links hold.
    cleanups.push(startSessionSweeper(automation, commandTimes, async () => registry.isLeader, undefined,
      (device) => directory.linkPlace(device)));
    const authenticate = sessionOrBasicAuth(db, { logger, throttle, kept });
    const app = createApiApp({
      screen,
      db,
      clock: options.clock,
      blobs,
      gateways,
      authenticate,
      authenticateNow: authenticate.now,
      kept,
      signIn: webSessionRouter(db, { logger, throttle }),
      events,
      webDir: config.webDir ?? DEFAULT_WEB_DIR,
      trustProxy: config.trustProxy,
      logger,
      uploadLimitBytes: config.uploadLimitBytes,
      uploadTempDir,
      packages,
      asyncJobTimeoutMs: config.asyncJobTimeoutMs,
      ticketKeys,
      metrics,
      serviceNodeId: await settingOrCreate(db, 'service_node_id', () => randomUUID()),
      dataPortState: config.dataPortState,
      metricsRegistry: hubMetricsRegistry(db, link.directory), // its link-session gauge counts this process's links
      metricsToken: config.metricsToken,
      appium: {
        automation, times: commandTimes, logger: automation.logger, listWaiting: () => listWaiting({ db }), noteDeviceUse: (device) => deviceUse.note(device),
        checkCredentials: credentialChecker(db, { logger, throttle, kept }), kept,
        forward: appiumForwarding({ holder: (device) => directory.remoteHolder(device), logger: automation.logger }),
      },
      waitingLine,
      deviceUse,
    });
    const server = await listen(app, config);
    const stopWebSockets = attachWebSocketRoutes(server, {
      db, throttle, logger,
      routes: {
        [DEVICE_CONNECT_PATH]: deviceConnectSocket({ db, gateways: directory, ticketKeys, logger, deviceUse }),
        [DEVICE_SCREEN_PATH]: deviceScreenSocket({ db, gateways: directory, viewers: screen.viewers, logger, deviceUse }),
      },
    });
    cleanups.push(() => new Promise<void>((resolve) => {
      stopWebSockets();
      server.close(() => resolve());
      server.closeAllConnections();
    }));
    const port = (server.address() as AddressInfo).port;
    const scheme = server instanceof https.Server ? 'https' : 'http';
    const replicaHost = config.replicaHost ?? os.hostname();
    await registry.setAddresses(`${scheme}://${replicaHost}:${port}`, `${replicaHost}:${link.port}`);
    return {
      url: `${scheme}://127.0.0.1:${port}`,
      port,
      linkPort: link.port,
      db,
      gateways: directory,
      adminToken,
      registerGateway: (name) => registerGateway(db, name),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * The directory the API uses: this replica's links, and the other replicas' through the command relay. A replica
 * hears relayed retains and metrics settings and passes them to its own gateways.
 */
async function replicaDirectory(
  db: Db, registry: ReplicaRegistry, link: LinkServer, feed: ChangeFeed, logger: Logger,
): Promise<ReplicaDirectory & { stop(): void }> {
  const relay = new CommandRelay(db, registry, localExecutor(link), {
    retention: (vendorUniqueIdentifier) => void currentRetentions(db, [vendorUniqueIdentifier]).then(
      (retentions) => { for (const retention of retentions) link.directory.notifyRetention(retention); },
      (err: unknown) => logger.warn({ err }, 'could not read a relayed retain'),
    ),
    metricsSettings: () => link.directory.notifyMetricsSettings(),
  }, logger.child({ component: 'relay' }));
  const remote = new RemoteGateways(db, logger);
  await remote.start(feed);
  return Object.assign(new ReplicaDirectory(db, link, relay, remote), {
    stop() {
      relay.stop();
      remote.stop();
    },
  });
}

async function listen(app: Express, config: HubConfig): Promise<http.Server> {
  const deadlines = config.requestDeadlines ?? DEFAULT_REQUEST_DEADLINES;
  const options = { ...deadlineServerOptions(deadlines), ...appMessageClasses(app) };
  const server = config.tlsCertFile && config.tlsKeyFile
    ? https.createServer({ ...options, cert: await fs.readFile(config.tlsCertFile), key: await fs.readFile(config.tlsKeyFile) }, app)
    : http.createServer(options, app);
  watchBodyPace(server, deadlines);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  return server;
}
