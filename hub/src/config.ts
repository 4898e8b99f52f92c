/** Hub configuration from the environment; every knob has a working default for the embedded lab. */
import path from 'node:path';
import { DataPortStateName, parseEnumValue } from '@devicelab/shared';

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
  /** Token for the built-in `admin` (`DEVICELAB_ADMIN_TOKEN`); generated and printed once when absent. */
  adminToken?: string;
  /** Largest accepted application upload (`DEVICELAB_UPLOAD_LIMIT_MB`, default 2048). */
  uploadLimitBytes: number;
  /** Most rows one metrics query answers (`DEVICELAB_METRICS_MAX_ROWS`; default the store's, 1,000,000). */
  metricsMaxRows?: number;
  /** HTTPS for the REST API when both are set (`DEVICELAB_TLS_CERT`, `DEVICELAB_TLS_KEY`: PEM file paths). */
  tlsCertFile?: string;
  tlsKeyFile?: string;
  /** TLS on the gateway link when both are set (`DEVICELAB_LINK_TLS_CERT`, `DEVICELAB_LINK_TLS_KEY`). */
  linkTlsCertFile?: string;
  linkTlsKeyFile?: string;
  /**
   * How `/Gateway` names a data-mode port's state until an administrator sets it in `/Settings`
   * (`DEVICELAB_DATA_PORT_STATE`: `Data`, the default, or `Sync` for the vendor's C# client).
   */
  dataPortState?: DataPortStateName;
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
    adminToken: env.DEVICELAB_ADMIN_TOKEN || undefined,
    uploadLimitBytes: integer(env.DEVICELAB_UPLOAD_LIMIT_MB, 2048, 'DEVICELAB_UPLOAD_LIMIT_MB') * 1024 * 1024,
    metricsMaxRows: env.DEVICELAB_METRICS_MAX_ROWS ? positive(env.DEVICELAB_METRICS_MAX_ROWS, 'DEVICELAB_METRICS_MAX_ROWS') : undefined,
    tlsCertFile: env.DEVICELAB_TLS_CERT || undefined,
    tlsKeyFile: env.DEVICELAB_TLS_KEY || undefined,
    linkTlsCertFile: env.DEVICELAB_LINK_TLS_CERT || undefined,
    linkTlsKeyFile: env.DEVICELAB_LINK_TLS_KEY || undefined,
    dataPortState: dataPortState(env.DEVICELAB_DATA_PORT_STATE),
  };
}

function dataPortState(text: string | undefined): DataPortStateName {
  if (!text) return 'Data';
  const value = parseEnumValue(DataPortStateName, text);
  if (!value) throw new Error(`DEVICELAB_DATA_PORT_STATE must be Data or Sync, got '${text}'`);
  return value;
}

function positive(text: string, name: string): number {
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
