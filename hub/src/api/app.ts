/**
 * The REST application: everything under `/apiv1`, behind the authentication middleware, with the wire rules of
 * `http/` applied once. Unknown paths answer 404 with a failure Result.
 */
import os from 'node:os';
import path from 'node:path';
import express, { type Express, type RequestHandler } from 'express';
import type { Registry } from 'prom-client';
import type { DataPortStateName, Logger } from '@devicelab/shared';
import type { BlobStore } from '../apps/blob-store';
import { PackageInspector } from '../apps/package-inspector';
import { DEFAULT_PACKAGE_INSPECTION } from '../config';
import type { Clock } from '../domain/async-jobs';
import type { TicketKeys } from '../domain/device-ticket';
import type { GatewayDirectory } from '../gateways/gateway-directory';
import type { MetricsStore } from '../metrics/metrics-store';
import { PostgresMetricsStore } from '../metrics/postgres-metrics-store';
import { textBody } from '../http/body';
import { localWrites } from '../http/local-writes';
import { KeptReads } from '../events/kept-reads';
import { eventStreamRouter } from '../http/event-stream';
import { errorHandler, notFound, rejectUnknownParameters } from '../http/handler';
import { metricsEndpoint, requestTiming } from '../http/metrics-endpoint';
import { staticWebRouter } from '../http/static-web';
import { currentSessionRouter, type AuthenticationNow } from '../http/web-session';
import { FirstReads } from '../http/first-reads';
import type { EventPublisher } from '../events/event-publisher';
import type { Db } from '../store/database';
import { applicationRouter } from './application-routes';
import { appiumRouter, type AppiumRouteDependencies } from './appium-routes';
import { asyncRouter } from './async-routes';
import type { ApiDependencies } from './context';
import { deviceRouter } from './device-routes';
import { gatewayRouter } from './gateway-routes';
import { metricsRouter } from './metrics-routes';
import { knownParameters } from './openapi/endpoints';
import { openApiRouter } from './openapi-routes';
import { reportRouter } from './report-routes';
import { reservationRouter } from './reservation-routes';
import { screenRouter, type ScreenRouteDependencies } from './screen-routes';
import { ScreenStills } from '../domain/screen-stills';
import { ScreenViewers } from '../domain/screen-viewers';
import { deviceUseByHolder } from './device-use-by-holder';
import { LineServer } from '../domain/line-server';
import { DeviceUseNotes } from '../domain/device-use';
import { thisReplica } from '../fleet/replica';
import { roleRouter } from './role-routes';
import { serviceRouter } from './service-routes';
import { settingsRouter } from './settings-routes';
import { userRouter } from './user-routes';
import { webhookRouter } from './webhook-routes';

interface ApiAppOptions {
  db: Db;
  blobs: BlobStore;
  gateways: GatewayDirectory;
  /** Sets `req.user` (AuthenticatedUser) or answers 401 itself; runs for every /apiv1 path. */
  authenticate: RequestHandler;
  /** What `authenticate` decides without waiting (http/web-session.ts); absent: the polled reads take the full way too. */
  authenticateNow?: AuthenticationNow;
  logger: Logger;
  /** Largest accepted application upload; default 2 GiB. */
  uploadLimitBytes?: number;
  /** Ed25519 key pair that signs DeviceAccessTicket authenticators (`loadTicketKeys`). */
  ticketKeys: TicketKeys;
  /** Where uploads are streamed before parsing; default `<os tmpdir>/devicelab-uploads`. */
  uploadTempDir?: string;
  /** Reads uploaded packages (a worker pool the caller stops); default one with the default limits. */
  packages?: PackageInspector;
  /** Deadline of every async job; default DEFAULT_ASYNC_JOB_TIMEOUT_MS. */
  asyncJobTimeoutMs?: number;
  /** Injectable clock (async job expiry, retain time, /Service). */
  clock?: Clock;
  /** HubInformation.ServiceNodeId: this hub install's id (kept in hub_settings). */
  serviceNodeId: string;
  /** HubInformation.ServiceVersion; default the hub package version. */
  serviceVersion?: string;
  /** Metrics store of /Device/Metrics; default the PostgreSQL store on `db`. */
  metrics?: MetricsStore;
  /** express `trust proxy`: who may name the client in X-Forwarded-For (HubConfig.trustProxy); default nobody. */
  trustProxy?: string[] | number;
  /** How /Gateway names a data-mode port's state until /Settings stores a choice; default `Data`. */
  dataPortState?: DataPortStateName;
  /** What `/metrics` serves (hubMetricsRegistry), to a scraper with `metricsToken`; absent either: no `/metrics`. */
  metricsRegistry?: Registry;
  metricsToken?: string;
  /** Dashboard sign-in and sign-out (`POST`/`DELETE /apiv1/Session`), mounted before `authenticate`. */
  signIn?: RequestHandler;
  /** The live channel `GET /apiv1/Events`; absent: no event stream. */
  events?: EventPublisher;
  /** The dashboard's build (`web/dist`), served at `/`; absent: nothing outside /apiv1. */
  webDir?: string;
  /** The live screen's viewers and stills (shared with the `/Device/Screen` WebSocket); default: new ones. */
  screen?: ScreenRouteDependencies;
  /** The WebDriver endpoint at `/Appium` and `/wd/hub`; absent: none. */
  appium?: AppiumRouteDependencies;
  /** This replica's waiting line (started on the change feed); absent: one that serves only when a request joins. */
  waitingLine?: LineServer;
  /** Use of devices by their holders (idle release); absent: one on `db` and the API's clock. */
  deviceUse?: DeviceUseNotes;
  /** Reads kept between writes (events/kept-reads.ts); absent: every read goes to the records. */
  kept?: KeptReads;
}

export function createApiApp(options: ApiAppOptions): Express {
  const deps: ApiDependencies = {
    db: options.db,
    blobs: options.blobs,
    gateways: options.gateways,
    metrics: options.metrics ?? new PostgresMetricsStore(options.db, { logger: options.logger }),
    logger: options.logger,
    ticketKeys: options.ticketKeys,
    uploadLimitBytes: options.uploadLimitBytes ?? 2 * 1024 * 1024 * 1024,
    uploadTempDir: options.uploadTempDir ?? path.join(os.tmpdir(), 'devicelab-uploads'),
    packages: options.packages ?? new PackageInspector(DEFAULT_PACKAGE_INSPECTION, options.logger),
    asyncJobTimeoutMs: options.asyncJobTimeoutMs,
    clock: options.clock ?? (() => new Date()),
    serviceNodeId: options.serviceNodeId,
    serviceVersion: options.serviceVersion,
    dataPortState: options.dataPortState ?? 'Data',
    waitingLine: options.waitingLine ?? new LineServer(options.db, {
      replicaId: () => thisReplica.id, isLeader: () => false, now: options.clock ?? (() => new Date()), logger: options.logger,
      gateways: options.gateways,
    }),
    deviceUse: options.deviceUse ?? new DeviceUseNotes(options.db, options.clock ?? (() => new Date()), options.logger),
    kept: options.kept ?? KeptReads.none(),
  };
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', false); // parameters are read by http/params from the raw URL
  app.set('trust proxy', options.trustProxy ?? false); // req.ip: the client address failed logins are throttled by
  const firstReads = new FirstReads();
  if (options.authenticateNow) app.use(firstReads.middleware('/apiv1', options.authenticateNow, deps.kept));
  app.use(requestTiming());
  // WebDriver clients speak their own protocol (W3C errors, credentials in the capabilities): their own router, before
  // `localWrites`, which would drop every kept read for each relayed POST (a click writes nothing to the records);
  // the router notes its own writes (creating and ending sessions).
  if (options.appium) app.use(['/Appium', '/wd/hub'], appiumRouter(options.appium));
  app.use(localWrites(deps.kept));
  if (options.metricsRegistry) app.use(metricsEndpoint(options.metricsRegistry, options.metricsToken, options.logger));
  const refuseUnknownParameters = rejectUnknownParameters(knownParameters());
  if (options.signIn) {
    // Signing in and out come before authentication, with the same refusal of keys they do not take.
    const sessionKeys = express.Router();
    sessionKeys.post('/Session', textBody(16 * 1024), refuseUnknownParameters);
    sessionKeys.delete('/Session', textBody(16 * 1024), refuseUnknownParameters);
    app.use('/apiv1', sessionKeys, options.signIn);
  }
  const api = express.Router();
  api.use(options.authenticate);
  api.use(textBody());
  api.use(refuseUnknownParameters);
  api.use(deviceUseByHolder(deps.deviceUse));
  api.use(deviceRouter(deps, firstReads));
  api.use(gatewayRouter(deps));
  api.use(metricsRouter(deps));
  api.use(applicationRouter(deps, firstReads));
  api.use(asyncRouter(deps));
  api.use(serviceRouter(deps, firstReads));
  api.use(reportRouter(deps));
  api.use(settingsRouter(deps));
  api.use(userRouter(deps));
  api.use(roleRouter(deps));
  api.use(webhookRouter(deps));
  api.use(reservationRouter(deps));
  api.use(screenRouter(deps, options.screen ?? { viewers: new ScreenViewers(), stills: new ScreenStills(deps.db, deps.gateways) }));
  api.use(openApiRouter(options.serviceVersion));
  api.use(currentSessionRouter());
  if (options.events) api.use(eventStreamRouter(options.events));
  api.use(notFound());
  app.use('/apiv1', api);
  if (options.webDir) app.use(staticWebRouter(options.webDir));
  app.use(notFound());
  app.use(errorHandler(options.logger));
  return app;
}
