/**
 * The gateway's Prometheus series on its own listen address (`DEVICELAB_GATEWAY_METRICS_LISTEN`): devices by
 * platform and readiness, failed device operations (adb, usbmux) by platform and code, USB hub ports by state, and
 * the metrics uplink's backlog (how far sampling is behind reaching the hub). All read at scrape time from what the
 * gateway already holds.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { Logger } from '@devicelab/shared';
import type { DriverRegistry } from '../drivers/registry';
import type { MetricsUplink } from '../link/metrics-uplink';
import type { DeviceSamplers } from '../samplers/device-samplers';
import type { UsbHubService } from '../usbhubs/usb-hub-service';
import { screenTunnelCounts } from '../screen/screen-tunnels';

export interface GatewayMetricsSources {
  drivers: Pick<DriverRegistry, 'snapshot' | 'failures'>;
  uplink: MetricsUplink;
  samplers?: DeviceSamplers;
  usbHubs?: UsbHubService;
}

const { version } = JSON.parse(readFileSync(path.join(__dirname, '../../package.json'), 'utf8')) as { version: string };

export function gatewayMetricsRegistry(sources: GatewayMetricsSources): Registry {
  const registry = new Registry();
  // The standard process and Node.js series (CPU, memory, event loop lag, handles, GC), read at scrape time.
  collectDefaultMetrics({ register: registry });
  new Gauge({
    name: 'devicelab_build_info',
    help: 'Always 1: the running gateway\'s version and Node.js version as labels.',
    labelNames: ['component', 'version', 'node'] as const,
    registers: [registry],
  }).set({ component: 'gateway', version, node: process.version }, 1);
  new Gauge({
    name: 'devicelab_gateway_screen_frames_total',
    help: 'Live screen frames written to screen tunnels (outcome=sent), or replaced by a newer one while a tunnel did not drain (outcome=dropped).',
    labelNames: ['outcome'] as const,
    registers: [registry],
    collect() {
      this.set({ outcome: 'sent' }, screenTunnelCounts.framesSent);
      this.set({ outcome: 'dropped' }, screenTunnelCounts.framesDropped);
    },
  });
  new Gauge({
    name: 'devicelab_gateway_devices',
    help: 'Devices this gateway reports, by operating system and readiness.',
    labelNames: ['os', 'readiness'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const counts = new Map<string, { os: string; readiness: string; n: number }>();
      for (const state of sources.drivers.snapshot()) {
        const key = `${state.operatingSystem}\0${state.readiness}`;
        const entry = counts.get(key) ?? { os: state.operatingSystem, readiness: state.readiness, n: 0 };
        entry.n += 1;
        counts.set(key, entry);
      }
      for (const { os, readiness, n } of counts.values()) this.set({ os, readiness }, n);
    },
  });
  new Counter({
    name: 'devicelab_gateway_device_errors_total',
    help: 'Device operations (commands, samples, probes) that failed, by operating system and error code.',
    labelNames: ['os', 'code'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const { platform, code, count } of sources.drivers.failures.values()) this.inc({ os: platform, code }, count);
    },
  });
  new Gauge({
    name: 'devicelab_gateway_usb_hub_ports',
    help: 'USB hub ports by hub serial number and port state; errored hubs count under state "Errored".',
    labelNames: ['hub', 'state'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const hub of sources.usbHubs?.report().hubs ?? []) {
        for (const port of hub.ports) this.inc({ hub: hub.serialNumber, state: hub.isErrored ? 'Errored' : port.state });
      }
    },
  });
  new Gauge({
    name: 'devicelab_gateway_metrics_buffered_rows',
    help: 'Sampled metric rows not yet acknowledged by the hub (the sampling lag behind the hub).',
    registers: [registry],
    collect() {
      this.set(sources.uplink.bufferedRows);
    },
  });
  new Gauge({
    name: 'devicelab_gateway_metrics_unacked_batches',
    help: 'Metric batches sent to the hub and not yet acknowledged.',
    registers: [registry],
    collect() {
      this.set(sources.uplink.unackedBatches);
    },
  });
  new Gauge({
    name: 'devicelab_gateway_dropped_log_lines',
    help: 'Device log lines dropped by the per-device rate limit since the gateway started.',
    registers: [registry],
    collect() {
      this.set(sources.samplers?.droppedLogLines ?? 0);
    },
  });
  return registry;
}

export interface MetricsServer {
  url: string;
  stop(): Promise<void>;
}

/** Serves `GET /metrics` on `host:port` (its own address: reachable only where the operator binds it). */
export async function startMetricsServer(registry: Registry, listen: { host: string; port: number }, logger: Logger): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    registry.metrics().then((text) => {
      res.writeHead(200, { 'content-type': registry.contentType }).end(text);
    }, (err: unknown) => {
      logger.error({ err }, 'metrics scrape failed');
      res.writeHead(503, { 'content-type': 'text/plain' }).end('metrics unavailable\n');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${listen.host.includes(':') ? `[${listen.host}]` : listen.host}:${port}/metrics`,
    stop: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
