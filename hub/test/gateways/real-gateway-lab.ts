/**
 * The far end of the hub's link server, made of real parts: simulated Android devices (labsim, speaking the
 * adbd wire protocol) behind a real adb server, and OUR gateway dialling the hub, either in this process
 * (`startGateway`, with its real AndroidDriver) or as the daemon (`gateway/src/main.ts` in a child process,
 * for what only a separate process can do: be SIGKILLed or SIGSTOPped). On the hub side: the real link server
 * on this file's own PostgreSQL test database.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { startGateway, type GatewayOptions, type RunningGateway } from '@devicelab/gateway';
import { LabWorld, type AndroidDeviceSpec, type DeviceTimings } from '@devicelab/labsim';
import type { Logger } from '@devicelab/shared';
import { BlobStore } from '../../src/apps/blob-store';
import { registerGateway } from '../../src/gateways/gateway-tokens';
import { startLinkServer, type LinkServer } from '../../src/gateways/link-server';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

const REPO = path.join(__dirname, '..', '..', '..');
const TS_REGISTER = path.join(REPO, 'hub', 'test', 'support', 'ts-register.cjs');
const GATEWAY_MAIN = path.join(REPO, 'gateway', 'src', 'main.ts');

/** One simulated device as the hub knows it: `vui` is the adb serial the gateway reports it under. */
export interface LabDevice {
  spec: AndroidDeviceSpec;
  vui: string;
}

/** A pino record as the gateway logged it. */
export type LogRecord = Record<string, unknown> & { level: number; msg: string };

export interface TestGateway {
  running: RunningGateway;
  /** Everything the gateway logged (debug and up). */
  logs: LogRecord[];
  /** Its app cache directory. */
  cacheDir: string;
  /** Sessions the gateway established: Welcome received and the hub's proof verified (`connected` events). */
  connections: number;
  /** Times the gateway lost a verified session. */
  disconnects: number;
  /** Times the gateway refused the hub's Welcome proof. */
  hubRejections: number;
  stop(): Promise<void>;
}

export interface GatewayDaemon {
  child: ChildProcess;
  /** stdout + stderr of the daemon so far (for failure messages). */
  output(): string;
  /** JSON log records the daemon printed. */
  logs(): LogRecord[];
  /** SIGKILLs the daemon if it is still alive. */
  kill(): Promise<void>;
}

/**
 * A plain TCP forwarder to the hub whose port accepts connections only after `open()`: a gateway dialling it
 * keeps retrying (as it does while the hub's network is away) and gets through once the route opens.
 */
export interface LateRoute {
  port: number;
  open(): Promise<void>;
  close(): Promise<void>;
}

export interface LinkLabOptions {
  gatewayName: string;
  devices: AndroidDeviceSpec[];
  heartbeatIntervalMs?: number;
  timings?: Partial<DeviceTimings>;
}

export interface LinkLab {
  t: TestDatabase;
  world: LabWorld;
  blobs: BlobStore;
  /** The running link server (replaced by `restartHub`). */
  readonly link: LinkServer;
  readonly linkPort: number;
  gatewayName: string;
  token: string;
  devices: LabDevice[];
  dir: string;
  /** Starts the real gateway in this process; stopped by `stop()` at the latest. */
  startGateway(options?: {
    name?: string;
    token?: string;
    /** Dial this port instead of the link server's (see `lateRoute`). */
    hubPort?: number;
    backoff?: { initialMs: number; maxMs: number };
    /** Any other gateway option (sampling intervals, metrics uplink bounds). */
    gatewayOptions?: Partial<GatewayOptions>;
  }): Promise<TestGateway>;
  /** A TCP route to the link server that opens later; closed by `stop()`. */
  lateRoute(): Promise<LateRoute>;
  /** Spawns the real gateway daemon; killed by `stop()` at the latest. */
  spawnGatewayDaemon(): GatewayDaemon;
  stopHub(): Promise<void>;
  /** Starts the link server again on the same port (a restarted hub). */
  startHub(): Promise<void>;
  stop(): Promise<void>;
}

export async function startLinkLab(options: LinkLabOptions): Promise<LinkLab> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'devicelab-link-lab-'));
  const t = await createTestDatabase();
  const blobs = new BlobStore(t.db);
  const token = await registerGateway(t.db, options.gatewayName);
  const world = new LabWorld({ stateDir: path.join(dir, 'labsim'), timings: options.timings });
  await world.start();
  const devices: LabDevice[] = [];
  for (const spec of options.devices) {
    const added = await world.addAndroidDevice(spec);
    devices.push({ spec, vui: added.adbSerial });
  }
  const serve = (port: number) =>
    startLinkServer({
      db: t.db, blobs, port, host: '127.0.0.1', heartbeatIntervalMs: options.heartbeatIntervalMs, logger: quietLogger(),
    });
  let link: LinkServer | undefined = await serve(0);
  const linkPort = link.port;
  const gateways = new Set<TestGateway>();
  const daemons = new Set<GatewayDaemon>();
  const routes = new Set<LateRoute>();
  let gatewayCount = 0;

  const lab: LinkLab = {
    t, world, blobs, gatewayName: options.gatewayName, token, devices, dir, linkPort,
    get link() {
      if (!link) throw new Error('the link server is stopped');
      return link;
    },
    async startGateway(overrides = {}) {
      gatewayCount += 1;
      const logs: LogRecord[] = [];
      const cacheDir = path.join(dir, `gateway-cache-${gatewayCount}`);
      const running = await startGateway({
        name: overrides.name ?? options.gatewayName,
        token: overrides.token ?? token,
        hubAddress: `127.0.0.1:${overrides.hubPort ?? linkPort}`,
        cacheDir,
        adbPort: world.adbServerPort,
        publicAddress: 'gw.lab.test',
        publicPort: 7000,
        backoff: overrides.backoff ?? { initialMs: 100, maxMs: 500 },
        logger: capturingLogger(logs),
        ...overrides.gatewayOptions,
      });
      const gateway: TestGateway = {
        running, logs, cacheDir, connections: 0, disconnects: 0, hubRejections: 0,
        stop: async () => {
          gateways.delete(gateway);
          await running.stop();
        },
      };
      running.link.on('connected', () => { gateway.connections += 1; });
      running.link.on('disconnected', () => { gateway.disconnects += 1; });
      running.link.on('hubRejected', () => { gateway.hubRejections += 1; });
      gateways.add(gateway);
      return gateway;
    },
    async lateRoute() {
      const route = await tcpRoute(linkPort);
      routes.add(route);
      return route;
    },
    spawnGatewayDaemon() {
      gatewayCount += 1;
      const child = spawn(process.execPath, ['-r', TS_REGISTER, GATEWAY_MAIN], {
        env: {
          ...process.env,
          ...world.env(), // ANDROID_ADB_SERVER_PORT and HOME of the simulated lab's adb server
          DEVICELAB_GATEWAY_NAME: options.gatewayName,
          DEVICELAB_GATEWAY_TOKEN: token,
          DEVICELAB_HUB: `127.0.0.1:${linkPort}`,
          DEVICELAB_GATEWAY_CACHE: path.join(dir, `gateway-cache-${gatewayCount}`),
          DEVICELAB_GATEWAY_PUBLIC_ADDRESS: 'gw.lab.test',
          DEVICELAB_GATEWAY_PUBLIC_PORT: '7000',
          DEVICELAB_LOG_LEVEL: 'info',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout!.on('data', (data: Buffer) => { output += data.toString(); });
      child.stderr!.on('data', (data: Buffer) => { output += data.toString(); });
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      const daemon: GatewayDaemon = {
        child,
        output: () => output,
        logs: () => output.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as LogRecord),
        kill: async () => {
          daemons.delete(daemon);
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
          await exited;
        },
      };
      daemons.add(daemon);
      return daemon;
    },
    async stopHub() {
      await link?.stop();
      link = undefined;
    },
    async startHub() {
      if (link) throw new Error('the link server is running');
      link = await serve(linkPort);
    },
    async stop() {
      for (const daemon of [...daemons]) await daemon.kill();
      for (const gateway of [...gateways]) await gateway.stop();
      for (const route of routes) await route.close();
      await link?.stop();
      await world.stop();
      await t.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return lab;
}

/** The hub's device row for a vendor unique identifier. */
export const deviceRow = (lab: LinkLab, vui: string) =>
  lab.t.db.selectFrom('devices').selectAll().where('vendor_unique_identifier', '=', vui).executeTakeFirst();

export const gatewayRow = (lab: LinkLab, name = lab.gatewayName) =>
  lab.t.db.selectFrom('gateways').selectAll().where('name', '=', name).executeTakeFirst();

/** DeviceAvailability events of one device, oldest first, as "Device Online" / "Device Offline". */
export async function availabilityHistory(lab: LinkLab, deviceId: string): Promise<string[]> {
  const events = await lab.t.db.selectFrom('events').select('message').where('device_id', '=', deviceId)
    .where('event_type', '=', 'DeviceAvailability').orderBy('event_date').execute();
  return events.map((e) => e.message);
}

/** Waits until every given device has this availability; returns how long that took. */
export async function waitForAvailability(lab: LinkLab, vuis: string[], availability: 'Online' | 'Offline', timeoutMs = 15_000): Promise<number> {
  const started = Date.now();
  await waitUntil(async () => {
    for (const vui of vuis) if ((await deviceRow(lab, vui))?.availability !== availability) return false;
    return true;
  }, timeoutMs, `${vuis.join(', ')} ${availability}`);
  return Date.now() - started;
}

/** Polls `check` until it returns a truthy value or `timeoutMs` passes. */
export async function waitUntil<T>(check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 5_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function tcpRoute(targetPort: number): Promise<LateRoute> {
  const probe = net.createServer();
  const port = await new Promise<number>((resolve) => probe.listen(0, '127.0.0.1', () => resolve((probe.address() as net.AddressInfo).port)));
  await new Promise((resolve) => probe.close(resolve));
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  };
  const server = net.createServer((inbound) => {
    const outbound = net.connect(targetPort, '127.0.0.1');
    track(inbound);
    track(outbound);
    inbound.on('close', () => outbound.destroy());
    outbound.on('close', () => inbound.destroy());
    inbound.pipe(outbound).pipe(inbound);
  });
  let listening = false;
  return {
    port,
    open: () => new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        listening = true;
        resolve();
      });
    }),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      if (listening) await new Promise((resolve) => server.close(resolve));
      listening = false;
    },
  };
}

function capturingLogger(records: LogRecord[]): Logger {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) records.push(JSON.parse(line) as LogRecord);
      done();
    },
  });
  return pino({ name: 'gateway', level: 'debug' }, sink);
}

function quietLogger(): Logger {
  return pino({ name: 'link', level: process.env.DEVICELAB_LOG_LEVEL ?? 'silent' });
}
