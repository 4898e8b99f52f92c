/**
 * Hub configuration from the environment, the one place the hub (and its CLI) reads it; every knob has a working
 * default for the embedded lab. Everything else receives typed values from here.
 */
import net from 'node:net';
import path from 'node:path';
import { ApiFailure, DataPortStateName, parseEnumValue } from '@devicelab/shared';
import type { PackageInspectionLimits } from './apps/package-inspector';
import type { RequestDeadlines } from './http/request-deadlines';
import { DEFAULT_ASYNC_JOB_TIMEOUT_MS } from './domain/async-jobs';
import type { WebhookDeliveryOptions } from './webhooks/delivery-worker';

const MB = 1024 * 1024;

/** What reading one uploaded package may cost at most (see README, "Uploads"). */
export const DEFAULT_PACKAGE_INSPECTION: PackageInspectionLimits = {
  maxEntries: 100_000,
  maxEntryBytes: 1024 * MB,
  maxTotalBytes: 4096 * MB,
  maxCompressionRatio: 200,
  timeoutMs: 120_000,
  heapMb: 256,
  workers: 2,
  maxPerUser: 4,
  maxWaiting: 16,
};

/** The dashboard's build in this checkout (`web/dist`, made by the bootstrap). */
export const DEFAULT_WEB_DIR = path.resolve(__dirname, '../../web/dist');

export const DEFAULT_BLOB_COPIES_MB = 4096;

export interface HubConfig {
  /** REST API port (`DEVICELAB_PORT`, default 8080; 0 picks a free one). */
  port: number;
  /** Address the REST API binds to (`DEVICELAB_HOST`, default 0.0.0.0). */
  host: string;
  /** gRPC port gateways dial (`DEVICELAB_LINK_PORT`, default 7443; 0 picks a free one). */
  linkPort: number;
  /** External PostgreSQL (`DATABASE_URL`); when absent the hub runs its own embedded PostgreSQL. */
  databaseUrl?: string;
  /** Embedded PostgreSQL data and app binaries (`DEVICELAB_DATA_DIR`, default ./data). */
  dataDir: string;
  /** Fixed port when the CLI starts the embedded PostgreSQL itself (`DEVICELAB_POSTGRES_PORT`; free port when unset). */
  embeddedPostgresPort?: number;
  /** Token for the built-in `admin` (`DEVICELAB_ADMIN_TOKEN`); generated and printed once when absent. */
  adminToken?: string;
  /** Largest accepted application upload (`DEVICELAB_UPLOAD_LIMIT_MB`, default 2048). */
  uploadLimitBytes: number;
  /**
   * Disk space for this replica's copies of app binaries, read instead of PostgreSQL to serve gateways
   * (`DEVICELAB_BLOB_COPIES_MB`, default DEFAULT_BLOB_COPIES_MB; 0 keeps none).
   */
  blobCopiesMaxBytes?: number;
  /** Headers, body pace and whole-request deadlines of the REST API (default DEFAULT_REQUEST_DEADLINES). */
  requestDeadlines?: RequestDeadlines;
  /** Limits of reading an uploaded package (`DEVICELAB_PACKAGE_*`; default DEFAULT_PACKAGE_INSPECTION). */
  packageInspection?: PackageInspectionLimits;
  /** Deadline of every async job (`DEVICELAB_ASYNC_JOB_TIMEOUT_S`, default 900). */
  asyncJobTimeoutMs?: number;
  /** Most rows one metrics query answers (`DEVICELAB_METRICS_MAX_ROWS`; default the store's, 1,000,000). */
  metricsMaxRows?: number;
  /** Days of metrics kept (`DEVICELAB_METRICS_RETENTION_DAYS`, default 30). */
  metricsRetentionDays?: number;
  /** HTTPS for the REST API when both are set (`DEVICELAB_TLS_CERT`, `DEVICELAB_TLS_KEY`: PEM file paths). */
  tlsCertFile?: string;
  tlsKeyFile?: string;
  /** TLS on the gateway link when both are set (`DEVICELAB_LINK_TLS_CERT`, `DEVICELAB_LINK_TLS_KEY`). */
  linkTlsCertFile?: string;
  linkTlsKeyFile?: string;
  /**
   * Reverse proxies whose `X-Forwarded-For` names the client (`DEVICELAB_TRUST_PROXY`): their addresses or
   * networks (express's `trust proxy` list, e.g. `loopback`, `10.0.0.0/8`), or a hop count. Unset: the peer's
   * address is the client's, and the header is ignored (anyone could write it).
   */
  trustProxy?: string[] | number;
  /**
   * How `/Gateway` names a data-mode port's state until an administrator sets it in `/Settings`
   * (`DEVICELAB_DATA_PORT_STATE`: `Data`, the default, or `Sync` for the vendor's C# client).
   */
  dataPortState?: DataPortStateName;
  /** Bearer token a Prometheus scraper presents for `/metrics` (`DEVICELAB_METRICS_TOKEN`); unset: no `/metrics`. */
  metricsToken?: string;
  /**
   * The host name other hub replicas reach this one's API and link ports by (`DEVICELAB_REPLICA_HOST`; default the
   * machine's host name): recorded in `hub_replicas`, used to forward device connections to the owning replica.
   */
  replicaHost?: string;
  /** Webhook delivery timing (retries, polling); default DEFAULT_WEBHOOK_DELIVERY. Not from the environment. */
  webhookDelivery?: Partial<WebhookDeliveryOptions>;
  /** The dashboard's files served at `/` (`DEVICELAB_WEB_DIR`; default DEFAULT_WEB_DIR). */
  webDir?: string;
  /**
   * How old another process's write may be and still not be seen by a read kept in memory
   * (`DEVICELAB_KEPT_READS_LAG_MS`, default 50, up to 100: requests need no round trip while a ping on the listening
   * connection sent less than this long ago was answered, and writes wait this long after their commit while other
   * replicas are live; 0: every request first proves it has heard every earlier write, one shared round trip).
   * The same on every replica.
   */
  keptReadsLagMs?: number;
}

export function hubConfigFromEnv(env: NodeJS.ProcessEnv = process.env): HubConfig {
  // Half a TLS configuration would silently serve plain HTTP: refuse it.
  if (!env.DEVICELAB_TLS_CERT !== !env.DEVICELAB_TLS_KEY) {
    throw new Error('DEVICELAB_TLS_CERT and DEVICELAB_TLS_KEY must be set together (PEM files) to serve HTTPS');
  }
  return {
    port: integer(env.DEVICELAB_PORT, 8080, 'DEVICELAB_PORT'),
    host: env.DEVICELAB_HOST || '0.0.0.0',
    linkPort: integer(env.DEVICELAB_LINK_PORT, 7443, 'DEVICELAB_LINK_PORT'),
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: path.resolve(env.DEVICELAB_DATA_DIR || 'data'),
    embeddedPostgresPort: env.DEVICELAB_POSTGRES_PORT ? integer(env.DEVICELAB_POSTGRES_PORT, 0, 'DEVICELAB_POSTGRES_PORT') : undefined,
    adminToken: env.DEVICELAB_ADMIN_TOKEN || undefined,
    uploadLimitBytes: integer(env.DEVICELAB_UPLOAD_LIMIT_MB, 2048, 'DEVICELAB_UPLOAD_LIMIT_MB') * 1024 * 1024,
    blobCopiesMaxBytes: integer(env.DEVICELAB_BLOB_COPIES_MB, DEFAULT_BLOB_COPIES_MB, 'DEVICELAB_BLOB_COPIES_MB') * 1024 * 1024,
    packageInspection: packageInspectionFromEnv(env),
    asyncJobTimeoutMs: positive(env.DEVICELAB_ASYNC_JOB_TIMEOUT_S, DEFAULT_ASYNC_JOB_TIMEOUT_MS / 1000,
      'DEVICELAB_ASYNC_JOB_TIMEOUT_S') * 1000,
    metricsMaxRows: env.DEVICELAB_METRICS_MAX_ROWS ? positive(env.DEVICELAB_METRICS_MAX_ROWS, 0, 'DEVICELAB_METRICS_MAX_ROWS') : undefined,
    metricsRetentionDays: metricsRetentionDays(env),
    tlsCertFile: env.DEVICELAB_TLS_CERT || undefined,
    tlsKeyFile: env.DEVICELAB_TLS_KEY || undefined,
    linkTlsCertFile: env.DEVICELAB_LINK_TLS_CERT || undefined,
    linkTlsKeyFile: env.DEVICELAB_LINK_TLS_KEY || undefined,
    trustProxy: env.DEVICELAB_TRUST_PROXY ? trustedProxies(env.DEVICELAB_TRUST_PROXY) : undefined,
    dataPortState: dataPortState(env.DEVICELAB_DATA_PORT_STATE),
    metricsToken: env.DEVICELAB_METRICS_TOKEN || undefined,
    replicaHost: env.DEVICELAB_REPLICA_HOST || undefined,
    webDir: env.DEVICELAB_WEB_DIR ? path.resolve(env.DEVICELAB_WEB_DIR) : undefined,
    keptReadsLagMs: keptReadsLag(env.DEVICELAB_KEPT_READS_LAG_MS),
  };
}

/** The most a kept read may lag another replica's writes: 0 to MAX_KEPT_READS_LAG_MS. */
function keptReadsLag(text: string | undefined): number {
  const lag = integer(text, DEFAULT_KEPT_READS_LAG_MS, 'DEVICELAB_KEPT_READS_LAG_MS');
  if (lag < 0 || lag > MAX_KEPT_READS_LAG_MS) {
    throw new Error(`DEVICELAB_KEPT_READS_LAG_MS must be 0 to ${MAX_KEPT_READS_LAG_MS} (milliseconds), got '${text}'`);
  }
  return lag;
}

/** Revocations and other replicas' writes take effect within this, whatever is configured. */
export const MAX_KEPT_READS_LAG_MS = 100;
export const DEFAULT_KEPT_READS_LAG_MS = 50;

function packageInspectionFromEnv(env: NodeJS.ProcessEnv): PackageInspectionLimits {
  const d = DEFAULT_PACKAGE_INSPECTION;
  return {
    maxEntries: positive(env.DEVICELAB_PACKAGE_MAX_ENTRIES, d.maxEntries, 'DEVICELAB_PACKAGE_MAX_ENTRIES'),
    maxEntryBytes: positive(env.DEVICELAB_PACKAGE_MAX_ENTRY_MB, d.maxEntryBytes / MB, 'DEVICELAB_PACKAGE_MAX_ENTRY_MB') * MB,
    maxTotalBytes: positive(env.DEVICELAB_PACKAGE_MAX_TOTAL_MB, d.maxTotalBytes / MB, 'DEVICELAB_PACKAGE_MAX_TOTAL_MB') * MB,
    maxCompressionRatio: positive(env.DEVICELAB_PACKAGE_MAX_RATIO, d.maxCompressionRatio, 'DEVICELAB_PACKAGE_MAX_RATIO'),
    timeoutMs: positive(env.DEVICELAB_PACKAGE_TIMEOUT_S, d.timeoutMs / 1000, 'DEVICELAB_PACKAGE_TIMEOUT_S') * 1000,
    heapMb: positive(env.DEVICELAB_PACKAGE_HEAP_MB, d.heapMb, 'DEVICELAB_PACKAGE_HEAP_MB'),
    workers: positive(env.DEVICELAB_PACKAGE_WORKERS, d.workers, 'DEVICELAB_PACKAGE_WORKERS'),
    maxPerUser: positive(env.DEVICELAB_PACKAGE_PER_USER, d.maxPerUser, 'DEVICELAB_PACKAGE_PER_USER'),
    maxWaiting: positive(env.DEVICELAB_PACKAGE_QUEUE, d.maxWaiting, 'DEVICELAB_PACKAGE_QUEUE'),
  };
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** A hop count, or addresses / networks / express's names; `true` (any sender) is refused. */
function trustedProxies(text: string): string[] | number {
  if (/^\d+$/.test(text.trim())) return positive(text.trim(), 0, 'DEVICELAB_TRUST_PROXY');
  const entries = text.split(',').map((entry) => entry.trim()).filter(Boolean);
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/');
    const validBits = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (net.isIPv6(address) ? 128 : 32));
    if (!PROXY_NAMES.has(entry) && !(net.isIP(address) && validBits && extra === undefined)) {
      throw new Error(
        `DEVICELAB_TRUST_PROXY: '${entry}' is not an address, a network (a.b.c.d/n) or one of loopback, linklocal, ` +
          'uniquelocal; name the proxies (trusting every sender would let any client choose its own address)',
      );
    }
  }
  return entries;
}

function dataPortState(text: string | undefined): DataPortStateName {
  if (!text) return 'Data';
  const value = parseEnumValue(DataPortStateName, text);
  if (!value) throw new Error(`DEVICELAB_DATA_PORT_STATE must be Data or Sync, got '${text}'`);
  return value;
}

export const LICENSED_DEVICES_ENV = 'DEVICELAB_LICENSED_DEVICES';

/**
 * The licensed device limit (`DEVICELAB_LICENSED_DEVICES`), read on every use rather than once at start: the
 * domain asks for it whenever a device would become licensed. Unset or empty = unlimited; anything but a whole
 * number ≥ 0 is a failure of the request that needed it.
 */
export function licensedDeviceLimit(env: NodeJS.ProcessEnv = process.env): number | null {
  const text = env[LICENSED_DEVICES_ENV]?.trim();
  if (!text) return null;
  if (!/^\d{1,9}$/.test(text)) {
    throw new ApiFailure(`${LICENSED_DEVICES_ENV} must be a whole number of devices (0 or more), not '${text}'.`);
  }
  return Number(text);
}

const RETENTION_DAYS_ENV = 'DEVICELAB_METRICS_RETENTION_DAYS';

/** Retention in whole days; default 30. Anything but a whole number >= 1 is refused. */
function metricsRetentionDays(env: NodeJS.ProcessEnv): number | undefined {
  const text = env[RETENTION_DAYS_ENV]?.trim();
  if (!text) return undefined;
  if (!/^\d{1,5}$/.test(text) || Number(text) < 1) {
    throw new Error(`${RETENTION_DAYS_ENV} must be a whole number of days, 1 or more (got '${text}')`);
  }
  return Number(text);
}

function positive(text: string | undefined, fallback: number, name: string): number {
  if (text === undefined || text === '') return fallback;
  const value = integer(text, 0, name);
  if (value < 1) throw new Error(`${name} must be 1 or more, got '${text}'`);
  return value;
}

function integer(text: string | undefined, fallback: number, name: string): number {
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got '${text}'`);
  return value;
}
