/**
 * A whole lab for end-to-end tests: the hub (on this file's own test database), one gateway and a simulated
 * Android lab behind a private adb server (and iOS devices behind a simulated usbmuxd, when asked for). Everything runs the production code paths; only the hardware is
 * simulated, at the adbd wire protocol.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startGateway, type RunningGateway } from '@devicelab/gateway';
import type { GatewayOptions, UsbHubsConfig } from '@devicelab/gateway';
import {
  createFakeXcrun, defaultAndroidLab, defaultIosLab, LabWorld, type AndroidDeviceSpec, type IosDeviceSpec, type SimCambrionixHub,
} from '@devicelab/labsim';
import type { Logger } from '@devicelab/shared';
import { createUser } from '../../src/auth/users';
import type { HubConfig } from '../../src/config';
import { startHub, type RunningHub } from '../../src/server';
import { createTestDatabase, type TestDatabase } from './test-database';

export interface TestLab {
  hub: RunningHub;
  dataDir: string;
  world: LabWorld;
  gateway: RunningGateway;
  devices: AndroidDeviceSpec[];
  /** iOS devices, paired with the gateway's host; on the USB hub after the Android ones. */
  iosDevices: IosDeviceSpec[];
  /** The simulated Cambrionix hub the devices hang from (device i on port i + 1), when asked for. */
  usbHub?: SimCambrionixHub;
  adminToken: string;
  /** Credentials of the built-in admin, for `api()`. */
  admin: { login: string; token: string };
  /** Stops the hub and starts it again on the same records, data and ports (as a restarted service would). */
  restartHub(): Promise<void>;
  /** Starts the gateway again after `stopGateway()` (same name and token, as a restarted daemon would). */
  restartGateway(): Promise<void>;
  stopGateway(): Promise<void>;
  /** A user with the given roles and its API token. */
  addUser(login: string, roles: string[]): Promise<{ login: string; token: string }>;
  /** fetch against `/apiv1` with Basic auth. */
  api(credentials: { login: string; token: string }, pathAndQuery: string, init?: RequestInit): Promise<Response>;
  stop(): Promise<void>;
}

/** The built-in admin's token in every test lab (a hub process beside the lab uses it too). */
export const ADMIN_TOKEN = '0b9d2f3e-7c1a-4e5b-9f00-6a2b3c4d5e6f';

export interface TestLabOptions {
  androidCount?: number;
  /** These Android devices instead of `androidCount` of the default lab's. */
  androidDevices?: AndroidDeviceSpec[];
  /** iOS devices behind the world's usbmuxd; the gateway runs its iOS driver when there are any. */
  iosCount?: number;
  /** iPhone 15 simulators (iOS 17.5) behind labsim's fake xcrun; the gateway runs its simulator driver when there are any. */
  simulatorCount?: number;
  logger?: Logger;
  /**
   * Put the devices on a simulated 8-port Cambrionix hub (serial `LABHUB01`) driven by the gateway. With
   * `usbLocation` (`1-1.4`) the hub is configured by its USB location and the iOS devices are found on its ports
   * by theirs (usbmuxd LocationID -> the simulated sysfs), not by the configured port map.
   */
  usbHub?: { serial?: string; usbLocation?: string; usbHubs?: Partial<UsbHubsConfig>; detachMs?: number };
  /** UDIDs for the first iOS devices (e.g. one a provisioning profile lists). */
  iosUdids?: string[];
  /** The gateway's metrics intervals (its defaults otherwise). */
  sampling?: GatewayOptions['sampling'];
  /** Records on this PostgreSQL (one the test can stop and start) instead of a fresh test database. */
  databaseUrl?: string;
  /** More hub configuration (e.g. `metricsToken`). */
  hubConfig?: Partial<HubConfig>;
  /** More gateway options (e.g. `metricsListen`). */
  gatewayOptions?: Partial<GatewayOptions>;
  /** The hub API's clock (e.g. one a test moves forward instead of sleeping). */
  clock?: () => Date;
}

export async function startTestLab(options: TestLabOptions = {}): Promise<TestLab> {
  const database: TestDatabase | undefined = options.databaseUrl ? undefined : await createTestDatabase({ maxConnections: 2 });
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'devicelab-lab-'));
  const config: HubConfig = {
    port: 0, host: '127.0.0.1', linkPort: 0, databaseUrl: options.databaseUrl ?? database!.url, dataDir,
    adminToken: ADMIN_TOKEN, uploadLimitBytes: 64 * 1024 * 1024, ...options.hubConfig,
  };
  let hub = await startHub(config, options.logger, { clock: options.clock });
  const world = new LabWorld({
    stateDir: path.join(dataDir, 'labsim'), timings: { rebootMs: 1500, bootCompleteMs: 1000 }, usbDetachMs: options.usbHub?.detachMs,
  });
  await world.start();
  const devices = options.androidDevices ?? defaultAndroidLab(options.androidCount ?? 2);
  for (const spec of devices) await world.addAndroidDevice(spec);
  const iosDevices = defaultIosLab(options.iosCount ?? 0).map((spec, i) => ({ ...spec, udid: options.iosUdids?.[i] ?? spec.udid }));
  const hubLocation = options.usbHub?.usbLocation;
  for (const [i, spec] of iosDevices.entries()) {
    await world.addIosDevice(spec, { usbPath: hubLocation ? `${hubLocation}.${devices.length + i + 1}` : undefined });
    await world.iosFleet.pairWithIdevicepair(spec.udid);
  }
  const portDevices = [...devices.map((spec) => spec.serial), ...iosDevices.map((spec) => spec.udid)];
  const mappedDevices = hubLocation ? devices.length : portDevices.length;
  const usbHub = options.usbHub ? await world.addCambrionixHub(
    { serial: options.usbHub.serial ?? 'LABHUB01', ports: 8, path: path.join(dataDir, 'ttyLABHUB'), rebootMs: 1000 },
    Object.fromEntries(portDevices.map((device, i) => [i + 1, device])),
  ) : undefined;
  const usbHubs: UsbHubsConfig | undefined = usbHub ? {
    cambrionix: [{ path: usbHub.path, usbLocation: hubLocation }], uhubctl: [], pollIntervalMs: 500, telemetryIntervalMs: 0,
    batteryCare: false, recovery: false, reopenDelayMs: 250, commandTimeoutMs: 2000,
    portMap: portDevices.slice(0, mappedDevices).map((device, i) => ({ hubSerialNumber: usbHub.serial, port: i + 1, device })),
    ...options.usbHub?.usbHubs,
  } : undefined;

  const simulatorCount = options.simulatorCount ?? 0;
  const xcrun = simulatorCount > 0 ? createFakeXcrun(path.join(dataDir, 'xcode')) : undefined;

  const { automation, ...gatewayOptions } = options.gatewayOptions ?? {};
  const gatewayToken = await hub.registerGateway('lab-gateway');
  const launchGateway = () => startGateway({
    name: 'lab-gateway', token: gatewayToken, hubAddress: `127.0.0.1:${hub.linkPort}`,
    cacheDir: path.join(dataDir, 'gateway-cache'), adbPort: world.adbServerPort,
    usbmuxdAddress: iosDevices.length ? world.env().USBMUXD_SOCKET_ADDRESS : undefined,
    usbSysfsDir: world.iosFleet.usbSysfsDir,
    xcrunBinary: xcrun?.binary,
    simulators: simulatorCount > 0 ? [{ kind: 'create', deviceType: 'iPhone 15', platform: 'iOS', version: '17.5', count: simulatorCount }] : [],
    publicAddress: '127.0.0.1', publicPort: 9000,
    backoff: { initialMs: 100, maxMs: 1000 },
    usbHubs,
    sampling: options.sampling,
    // Labs of parallel test files each take their own window of automation ports.
    automation: automation === false ? false
      : { ports: { first: 20000 + (process.pid % 90) * 100, last: 20000 + (process.pid % 90) * 100 + 99 }, ...automation },
    ...gatewayOptions,
  });
  let gateway: RunningGateway | undefined = await launchGateway();
  await waitFor(async () => {
    // A device goes Online as soon as its facts are read; its installed packages follow a moment later.
    const online = await hub.db.selectFrom('devices').select('id').where('availability', '=', 'Online')
      .where('installed_packages', 'is not', null).execute();
    return online.length === devices.length + iosDevices.length + simulatorCount;
  }, 30_000 + simulatorCount * 30_000, 'every simulated device Online with its installed packages');

  const lab: TestLab = {
    get hub() {
      return hub;
    },
    dataDir, world, devices, iosDevices, usbHub, adminToken: ADMIN_TOKEN, admin: { login: 'admin', token: ADMIN_TOKEN },
    async restartHub() {
      const { port, linkPort } = hub;
      await hub.stop();
      hub = await startHub({ ...config, port, linkPort }, options.logger, { clock: options.clock });
    },
    get gateway() {
      if (!gateway) throw new Error('gateway is stopped');
      return gateway;
    },
    async stopGateway() {
      await gateway?.stop();
      gateway = undefined;
    },
    async restartGateway() {
      gateway = await launchGateway();
    },
    async addUser(login, roles) {
      const { token } = await createUser(hub.db, { login, roles });
      return { login, token };
    },
    api(credentials, pathAndQuery, init = {}) {
      const auth = Buffer.from(`${credentials.login}:${credentials.token}`).toString('base64');
      return fetch(`${hub.url}/apiv1${pathAndQuery}`, {
        ...init,
        headers: { authorization: `Basic ${auth}`, ...(init.headers as Record<string, string> | undefined) },
      });
    },
    async stop() {
      await gateway?.stop();
      await world.stop();
      await hub.stop();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return lab;
}

/** Polls `probe` until it returns a truthy value or `timeoutMs` passes; returns the value and the time taken. */
export async function waitFor<T>(probe: () => Promise<T | undefined | false>, timeoutMs: number, what: string,
): Promise<{ value: T; elapsedMs: number }> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    if (value) return { value, elapsedMs: Date.now() - started };
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
