/**
 * Composition of the hub: records store, built-in accounts, app blob store, the gateway link (gRPC) and the
 * REST API (HTTP, or HTTPS when a certificate is configured). `startHub` is what `devicelab serve`, the demo
 * and the end-to-end tests run.
 */
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createLogger, type Logger } from '@devicelab/shared';
import { BlobStore } from './apps/blob-store';
import { importDiskBlobs } from './apps/disk-blob-import';
import { PackageInspector } from './apps/package-inspector';
import { createApiApp } from './api/app';
import { attachWebSocketRoutes } from './http/websocket-upgrade';
import { DEVICE_CONNECT_PATH, deviceConnectSocket } from './api/device-connect-socket';
import { LoginThrottle } from './auth/login-throttle';
import { ChangeFeed } from './events/change-feed';
import { EventPublisher } from './events/event-publisher';
import { sessionOrBasicAuth, webSessionRouter } from './http/web-session';
import { ensureBuiltInRolesAndAdmin } from './auth/users';
import { failInterruptedJobs } from './domain/async-jobs';
import { holdInterruptedJobs } from './domain/interrupted-jobs';
import { loadTicketKeys } from './domain/device-ticket';
import { recordServerStart } from './domain/events';
import { DEFAULT_PACKAGE_INSPECTION, DEFAULT_WEB_DIR, type HubConfig } from './config';
import { registerGateway } from './gateways/gateway-tokens';
import type { GatewayDirectory } from './gateways/gateway-directory';
import { startLinkServer } from './gateways/link-server';
import { removeStaleUploads } from './http/upload';
import { startMetricsMaintenance } from './metrics/maintenance';
import { hubMetricsRegistry, timedGatewayDirectory } from './observability/hub-metrics';
import { startWebhookDelivery } from './webhooks/delivery-worker';
import { DEFAULT_RETENTION_DAYS, PostgresMetricsStore } from './metrics/postgres-metrics-store';
import type { Db } from './store/database';
import { openRecordsStore } from './store/open-records-store';
import { settingOrCreate } from './store/settings';

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
}

export async function startHub(
  config: HubConfig,
  logger: Logger = createLogger('hub'),
  options: StartHubOptions = {},
): Promise<RunningHub> {
  const store = await openRecordsStore({
    databaseUrl: config.databaseUrl, dataDir: config.dataDir, logger, onEmbeddedServerLost: options.onRecordsStoreLost,
  });
  const cleanups: (() => Promise<void>)[] = [() => store.stop()];
  const stop = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((err) => logger.error({ err }, 'stop failed'));
  };
  try {
    const { db } = store;
    const { adminToken } = await ensureBuiltInRolesAndAdmin(db, { adminToken: config.adminToken });
    // Jobs a previous process left running can never finish: an install is reconciled with the device once its
    // gateway reports it again; any other gets a failure for its pollers.
    await holdInterruptedJobs(db);
    await failInterruptedJobs(db);
    cleanups.push(await recordServerStart(db)); // ServerStarting (+ ServerRestarting after an unclean stop)
    const blobs = new BlobStore(db);
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
    cleanups.push(await startMetricsMaintenance(metrics, { retentionDays, logger, db }));
    const link = await startLinkServer({
      db, blobs, port: config.linkPort, host: config.host, tls: linkTls, logger, ticketPublicKey: ticketKeys.publicKeyDer,
      metrics,
    });
    cleanups.push(() => link.stop());

    cleanups.push(startWebhookDelivery(db, logger.child({ component: 'webhooks' }), config.webhookDelivery));
    const gateways = timedGatewayDirectory(link.directory);
    const feed = new ChangeFeed(db, store.url, logger);
    await feed.start();
    cleanups.push(() => feed.stop());
    const dataPortState = config.dataPortState ?? 'Data';
    const events = new EventPublisher(feed, { db, gateways: link.directory, dataPortState, logger });
    // One throttle for Basic auth and the dashboard's sign-in form: guessing through either counts alike.
    const throttle = new LoginThrottle();
    const app = createApiApp({
      db,
      blobs,
      gateways,
      authenticate: sessionOrBasicAuth(db, { logger, throttle }),
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
      metricsRegistry: hubMetricsRegistry(db, link.directory),
      metricsToken: config.metricsToken,
    });
    const server = await listen(app, config);
    const stopWebSockets = attachWebSocketRoutes(server, {
      db, throttle, logger,
      routes: { [DEVICE_CONNECT_PATH]: deviceConnectSocket({ db, gateways: link.directory, ticketKeys, logger }) },
    });
    cleanups.push(() => new Promise<void>((resolve) => {
      stopWebSockets();
      server.close(() => resolve());
      server.closeAllConnections();
    }));
    const port = (server.address() as AddressInfo).port;
    const scheme = server instanceof https.Server ? 'https' : 'http';
    return {
      url: `${scheme}://127.0.0.1:${port}`,
      port,
      linkPort: link.port,
      db,
      gateways: link.directory,
      adminToken,
      registerGateway: (name) => registerGateway(db, name),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function listen(app: http.RequestListener, config: HubConfig): Promise<http.Server> {
  const server = config.tlsCertFile && config.tlsKeyFile
    ? https.createServer({ cert: await fs.readFile(config.tlsCertFile), key: await fs.readFile(config.tlsKeyFile) }, app)
    : http.createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  return server;
}
