/**
 * The hub's Prometheus series. Event-driven instruments (HTTP, commands, async jobs, metrics ingest) are
 * process-wide, as prom-client's are; everything that describes the lab's state (devices, retains, jobs,
 * gateways, the pool) is read from the database or the link at scrape time, so it is true on any replica and
 * costs nothing between scrapes. Labels are bounded: route templates, command kinds, enum values, gateway names.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { sql } from 'kysely';
import type { CommandResult } from '@devicelab/proto';
import type { GatewayDirectory } from '../gateways/gateway-directory';
import { poolOf, type Db } from '../store/database';
import { screenRelayCounts } from '../tunnel/screen-relay';

const events = new Registry();
// The standard process and Node.js series (CPU, memory, event loop lag, handles, GC), read at scrape time.
collectDefaultMetrics({ register: events });

const { version } = JSON.parse(readFileSync(path.join(__dirname, '../../package.json'), 'utf8')) as { version: string };
new Gauge({
  name: 'devicelab_build_info',
  help: 'Always 1: the running hub\'s version and Node.js version as labels.',
  labelNames: ['component', 'version', 'node'] as const,
  registers: [events],
}).set({ component: 'hub', version, node: process.version }, 1);
new Gauge({
  name: 'devicelab_screen_frames_total',
  help: 'Live screen frames relayed to viewers (outcome=sent), or replaced by a newer one before a slow viewer took them (outcome=dropped).',
  labelNames: ['outcome'] as const,
  registers: [events],
  collect() {
    this.set({ outcome: 'sent' }, screenRelayCounts.framesSent);
    this.set({ outcome: 'dropped' }, screenRelayCounts.framesDropped);
  },
});
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export const httpRequestDuration = new Histogram({
  name: 'devicelab_http_request_duration_seconds',
  help: 'REST requests by method, route template (never the raw URL) and status code.',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [events],
});

export const commandDuration = new Histogram({
  name: 'devicelab_command_duration_seconds',
  help: 'Gateway commands from sending to their result, by kind and outcome (ok, failed, unavailable).',
  labelNames: ['kind', 'outcome'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [events],
});

export const asyncJobDuration = new Histogram({
  name: 'devicelab_async_job_duration_seconds',
  help: 'Async jobs from start to their stored result, by kind.',
  labelNames: ['kind'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [events],
});

export const metricsIngestRows = new Counter({
  name: 'devicelab_metrics_ingest_rows_total',
  help: 'Metrics rows received from gateways, by outcome (stored, discarded).',
  labelNames: ['outcome'] as const,
  registers: [events],
});

export const webhookDeliveries = new Counter({
  name: 'devicelab_webhook_deliveries_total',
  help: 'Webhook delivery attempts by outcome (delivered, retry, failed: given up).',
  labelNames: ['outcome'] as const,
  registers: [events],
});

/** The registry `/metrics` serves for one hub: the process-wide instruments plus this hub's scrape-time state. */
export function hubMetricsRegistry(db: Db, gateways: GatewayDirectory): Registry {
  const state = new Registry();
  // First: a scrape collects every series at once, and the queries of the ones below would wait in this pool.
  new Gauge({
    name: 'devicelab_db_pool_connections',
    help: 'PostgreSQL pool of this hub process: total, idle connections and requests waiting for one.',
    labelNames: ['state'] as const,
    registers: [state],
    collect() {
      const pool = poolOf(db);
      this.set({ state: 'total' }, pool?.totalCount ?? 0);
      this.set({ state: 'idle' }, pool?.idleCount ?? 0);
      this.set({ state: 'waiting' }, pool?.waitingCount ?? 0);
    },
  });
  new Gauge({
    name: 'devicelab_devices',
    help: 'Devices (not deleted) by gateway, availability and readiness.',
    labelNames: ['gateway', 'availability', 'readiness'] as const,
    registers: [state],
    async collect() {
      const rows = await db.selectFrom('devices').leftJoin('gateways', 'gateways.id', 'devices.gateway_id')
        .select(['gateways.name as gateway', 'devices.availability', 'devices.readiness', sql<string>`count(*)`.as('count')])
        .where('devices.deleted', '=', false)
        .groupBy(['gateways.name', 'devices.availability', 'devices.readiness']).execute();
      this.reset();
      for (const row of rows) {
        this.set({ gateway: row.gateway ?? '', availability: row.availability, readiness: row.readiness }, Number(row.count));
      }
    },
  });
  new Gauge({
    name: 'devicelab_devices_retained',
    help: 'Devices currently retained by a user.',
    registers: [state],
    async collect() {
      const row = await db.selectFrom('devices').select(sql<string>`count(*)`.as('count'))
        .where('deleted', '=', false).where('retained_by', 'is not', null).executeTakeFirstOrThrow();
      this.set(Number(row.count));
    },
  });
  new Gauge({
    name: 'devicelab_async_jobs',
    help: 'Async jobs on record by kind and status: running, complete (result not collected yet), delivered (collected, dropped at the next poll); a job nobody polls for 5 minutes is dropped.',
    labelNames: ['kind', 'status'] as const,
    registers: [state],
    async collect() {
      const rows = await db.selectFrom('async_jobs').select(['kind', 'status', sql<string>`count(*)`.as('count')])
        .groupBy(['kind', 'status']).execute();
      this.reset();
      for (const row of rows) this.set({ kind: row.kind, status: row.status }, Number(row.count));
    },
  });
  new Gauge({
    name: 'devicelab_gateways',
    help: 'Registered gateways by whether they are connected (to any replica).',
    labelNames: ['connected'] as const,
    registers: [state],
    async collect() {
      const rows = await db.selectFrom('gateways').select(['connected', sql<string>`count(*)`.as('count')])
        .groupBy('connected').execute();
      this.reset();
      this.set({ connected: 'true' }, 0);
      this.set({ connected: 'false' }, 0);
      for (const row of rows) this.set({ connected: String(row.connected) }, Number(row.count));
    },
  });
  new Gauge({
    name: 'devicelab_link_sessions',
    help: 'Gateway link sessions open on this hub process.',
    registers: [state],
    collect() {
      this.set(gateways.connectedGateways().length);
    },
  });
  return Registry.merge([events, state]);
}

/**
 * The directory, timing every command it sends (`devicelab_command_duration_seconds`). A proxy rather than a
 * copy of the interface, so methods the directory gains later pass through untouched.
 */
export function timedGatewayDirectory(directory: GatewayDirectory): GatewayDirectory {
  const timed = async (kind: string, send: () => Promise<CommandResult>): Promise<CommandResult> => {
    const end = commandDuration.startTimer({ kind });
    try {
      const result = await send();
      end({ outcome: result.ok ? 'ok' : 'failed' });
      return result;
    } catch (err) {
      end({ outcome: 'unavailable' });
      throw err;
    }
  };
  const sendCommand: GatewayDirectory['sendCommand'] = (id, action, timeoutMs, onProgress) =>
    timed(action.action, () => directory.sendCommand(id, action, timeoutMs, onProgress));
  const sendUsbHubCommand: GatewayDirectory['sendUsbHubCommand'] = (serial, action, timeoutMs) =>
    timed(action.action, () => directory.sendUsbHubCommand(serial, action, timeoutMs));
  return new Proxy(directory, {
    get(target, property, receiver) {
      if (property === 'sendCommand') return sendCommand;
      if (property === 'sendUsbHubCommand') return sendUsbHubCommand;
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
