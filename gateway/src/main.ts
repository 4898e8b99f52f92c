/**
 * Gateway daemon. Environment:
 *   DEVICELAB_GATEWAY_NAME      gateway name as registered at the hub (required)
 *   DEVICELAB_GATEWAY_TOKEN     gateway token (required)
 *   DEVICELAB_HUB               hub link address host:port (required); with hub replicas, a comma-separated list
 *                               (`a:7443,b:7443`): the gateway moves to the next one at once when its replica dies
 *   DEVICELAB_GATEWAY_CACHE     app cache directory (default ./gateway-cache)
 *   DEVICELAB_GATEWAY_PUBLIC_ADDRESS / DEVICELAB_GATEWAY_PUBLIC_PORT
 *                               where clients reach this gateway's device services (default hostname / 0)
 *   DEVICELAB_HUB_CA, DEVICELAB_GATEWAY_CERT, DEVICELAB_GATEWAY_KEY
 *                               PEM files; DEVICELAB_HUB_CA (or DEVICELAB_HUB_TLS=1 for system roots) turns TLS on
 *   DEVICELAB_HUB_TLS_NAME      name to verify in the hub certificate when it differs from the DEVICELAB_HUB host
 *   ANDROID_ADB_SERVER_PORT     adb server port (default 5037); DEVICELAB_ADB_BIN adb binary (default `adb`)
 *   USBMUXD_SOCKET_ADDRESS      usbmuxd for iOS devices (`UNIX:/path` or `host:port`); default /var/run/usbmuxd when it
 *                               exists; without usbmuxd the gateway drives Android devices only
 *   XCRUN_BINARY                xcrun for iOS simulators (default: `xcrun` on the PATH, as on a Mac with Xcode)
 *   DEVICELAB_SIMULATORS        the simulators offered: `iPhone 15:iOS-17-5*2,iPad Pro (11-inch):iOS-17-5` and/or UDIDs
 *   DEVICELAB_GATEWAY_ADB_PORTS ports of the retainers' adb endpoints, `first-last` (default 7400-7599; `off`: none)
 *   DEVICELAB_LOG_LEVEL         pino level (default warn)
 *   DEVICELAB_SAMPLE_INTERVAL_S, DEVICELAB_HEALTH_CHECK_INTERVAL_S
 *                               seconds between `sample` reads / `health_check` probes per device (10 / 60; 0 = off)
 *   DEVICELAB_LOG_LINES_PER_SECOND  device log lines kept per device and second (100; 0 = no `log` rows)
 *   DEVICELAB_METRICS_BUFFER_ROWS   metric rows held while the hub is away; oldest dropped beyond (100000)
 *   DEVICELAB_SAMPLING=off      no device sampling at all
 *   DEVICELAB_GATEWAY_METRICS_LISTEN  host:port to serve Prometheus `/metrics` on (unset: not served; no token, so
 *                               bind it where only the scraper reaches, e.g. 127.0.0.1:9464)
 *   DEVICELAB_AUTOMATION        when a device's Appium server starts: `first-session` (default: at its first automation
 *                               connection), `ready` (as soon as the device is Ready), `off` (no automation servers)
 *   DEVICELAB_AUTOMATION_PORTS  the devices' automation port blocks, `first-last` (default 20000-20999; 10 ports a device)
 *   DEVICELAB_AUTOMATION_LOG_BYTES  Appium log kept per device, in bytes (default 2097152, at most 3145728)
 *   DEVICELAB_APPIUM_HOME       where Appium and its drivers are installed (default: the gateway package's directory)
 *   DEVICELAB_CAMBRIONIX, DEVICELAB_CAMBRIONIX_SCAN, DEVICELAB_UHUBCTL_HUBS, DEVICELAB_USB_PORT_MAP, ...
 *                               USB hubs, battery care and recovery (usbhubs/usb-hubs-config.ts, README "USB hubs")
 */
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@devicelab/shared';
import { DEFAULT_USBMUXD_ADDRESS } from './drivers/ios/usbmux';
import { parseSimulatorOffers } from './drivers/ios-simulator/simulator-offers';
import type { PortRange } from './access/adb-access-endpoints';
import { MAX_AUTOMATION_LOG_BYTES, type AutomationOptions } from './automation/automation-servers';
import { PORTS_PER_DEVICE } from './automation/port-blocks';
import { startGateway, type GatewayOptions } from './gateway';
import type { HubLinkTls } from './link/hub-link';
import { parseHubAddresses } from './link/hub-rotation';
import type { SamplingOptions } from './samplers/sampling-options';
import { usbHubsConfigFromEnv } from './usbhubs/usb-hubs-config';

export function optionsFromEnv(env: NodeJS.ProcessEnv = process.env): GatewayOptions {
  const required = (key: string) => {
    const value = env[key]?.trim();
    if (!value) throw new Error(`${key} is required`);
    return value;
  };
  const file = (key: string) => (env[key] ? readFileSync(env[key] as string) : undefined);
  const hubAddresses = () => {
    const addresses = parseHubAddresses(required('DEVICELAB_HUB'));
    if (addresses.length === 0) throw new Error('DEVICELAB_HUB must name at least one host:port');
    return addresses;
  };
  const ca = file('DEVICELAB_HUB_CA');
  const cert = file('DEVICELAB_GATEWAY_CERT');
  const key = file('DEVICELAB_GATEWAY_KEY');
  const serverName = env.DEVICELAB_HUB_TLS_NAME || undefined;
  const tls: HubLinkTls | undefined = ca || cert || serverName || env.DEVICELAB_HUB_TLS === '1'
    ? { ca, cert, key, serverName }
    : undefined;
  const adbPort = env.ANDROID_ADB_SERVER_PORT ? Number(env.ANDROID_ADB_SERVER_PORT) : undefined;
  /** A non-negative number from the environment, or undefined when unset; anything else is a clear error. */
  const number = (key: string, scale = 1) => {
    const text = env[key]?.trim();
    if (!text) return undefined;
    const value = Number(text);
    if (!Number.isFinite(value) || value < 0) throw new Error(`${key} must be a number >= 0 (got ${JSON.stringify(text)})`);
    return value * scale;
  };
  const sampling: Partial<SamplingOptions> = {};
  const sampleMs = number('DEVICELAB_SAMPLE_INTERVAL_S', 1000);
  const healthMs = number('DEVICELAB_HEALTH_CHECK_INTERVAL_S', 1000);
  const logLines = number('DEVICELAB_LOG_LINES_PER_SECOND');
  if (sampleMs !== undefined) sampling.sampleIntervalMs = sampleMs;
  if (healthMs !== undefined) sampling.healthCheckIntervalMs = healthMs;
  if (logLines !== undefined) sampling.logLinesPerSecond = logLines;
  const bufferRows = number('DEVICELAB_METRICS_BUFFER_ROWS');
  const usbHubs = usbHubsConfigFromEnv(env);
  const usbmuxdAddress = env.USBMUXD_SOCKET_ADDRESS?.trim()
    || (existsSync(DEFAULT_USBMUXD_ADDRESS.slice('UNIX:'.length)) ? DEFAULT_USBMUXD_ADDRESS : undefined);
  const xcrunBinary = findExecutable(env.XCRUN_BINARY?.trim() || 'xcrun', env.PATH ?? '');
  return {
    adbAccessPorts: portRangeFromEnv(env.DEVICELAB_GATEWAY_ADB_PORTS),
    name: required('DEVICELAB_GATEWAY_NAME'),
    token: required('DEVICELAB_GATEWAY_TOKEN'),
    hubAddress: hubAddresses(),
    cacheDir: env.DEVICELAB_GATEWAY_CACHE || './gateway-cache',
    adbPort: Number.isInteger(adbPort) ? adbPort : undefined,
    adbBin: env.DEVICELAB_ADB_BIN || undefined,
    usbmuxdAddress,
    xcrunBinary,
    simulators: parseSimulatorOffers(env.DEVICELAB_SIMULATORS ?? ''),
    publicAddress: env.DEVICELAB_GATEWAY_PUBLIC_ADDRESS || os.hostname(),
    publicPort: Number(env.DEVICELAB_GATEWAY_PUBLIC_PORT ?? 0) || 0,
    tls,
    sampling: /^(off|0|false)$/i.test(env.DEVICELAB_SAMPLING?.trim() ?? '') ? false : sampling,
    metricsUplink: bufferRows !== undefined ? { bufferRows: Math.floor(bufferRows) } : undefined,
    usbHubs: usbHubs.cambrionix.length + usbHubs.uhubctl.length > 0 ? usbHubs : undefined,
    metricsListen: listenAddress(env.DEVICELAB_GATEWAY_METRICS_LISTEN, 'DEVICELAB_GATEWAY_METRICS_LISTEN'),
    automation: automationFromEnv(env, number('DEVICELAB_AUTOMATION_LOG_BYTES')),
  };
}

/** DEVICELAB_AUTOMATION, DEVICELAB_AUTOMATION_PORTS, DEVICELAB_APPIUM_HOME and the log budget; `false`: off. */
function automationFromEnv(env: NodeJS.ProcessEnv, logBytes: number | undefined): Partial<AutomationOptions> | false {
  const mode = env.DEVICELAB_AUTOMATION?.trim().toLowerCase() || 'first-session';
  if (/^(off|0|false|none)$/.test(mode)) return false;
  if (mode !== 'first-session' && mode !== 'ready') {
    throw new Error(`DEVICELAB_AUTOMATION must be first-session, ready or off (got ${JSON.stringify(mode)})`);
  }
  if (logBytes !== undefined && (logBytes < 1024 || logBytes > MAX_AUTOMATION_LOG_BYTES)) {
    throw new Error(`DEVICELAB_AUTOMATION_LOG_BYTES must be 1024-${MAX_AUTOMATION_LOG_BYTES} (got ${logBytes})`);
  }
  const ports = env.DEVICELAB_AUTOMATION_PORTS?.trim()
    ? portRange(env.DEVICELAB_AUTOMATION_PORTS, 'DEVICELAB_AUTOMATION_PORTS') : undefined;
  if (ports && ports.last - ports.first + 1 < PORTS_PER_DEVICE) {
    throw new Error(`DEVICELAB_AUTOMATION_PORTS must hold at least ${PORTS_PER_DEVICE} ports`);
  }
  return {
    start: mode,
    ...(ports ? { ports } : {}),
    ...(logBytes !== undefined ? { logBytes: Math.floor(logBytes) } : {}),
    ...(env.DEVICELAB_APPIUM_HOME?.trim() ? { appiumHome: path.resolve(env.DEVICELAB_APPIUM_HOME.trim()) } : {}),
  };
}

/** A path as it is, a bare name looked up on the PATH; undefined when there is no such file. */
function findExecutable(name: string, searchPath: string): string | undefined {
  if (name.includes(path.sep)) return existsSync(name) ? path.resolve(name) : undefined;
  return searchPath.split(path.delimiter).filter(Boolean).map((dir) => path.join(dir, name)).find((file) => existsSync(file));
}

/** `first-last` (or one port); `off` turns the adb endpoints off; unset: the default range. */
function portRangeFromEnv(text: string | undefined): PortRange | false | undefined {
  const value = text?.trim();
  if (!value) return undefined;
  if (/^(off|none|0)$/i.test(value)) return false;
  return portRange(value, 'DEVICELAB_GATEWAY_ADB_PORTS');
}

/** `first-last` (or one port) within 1-65535; anything else is a clear error naming the key. */
function portRange(text: string, key: string): PortRange {
  const value = text.trim();
  const match = /^(\d{1,5})(?:\s*-\s*(\d{1,5}))?$/.exec(value);
  const first = Number(match?.[1]);
  const last = Number(match?.[2] ?? match?.[1]);
  if (!match || first < 1 || last > 65535 || last < first) {
    throw new Error(`${key} must be 'first-last' within 1-65535 (got ${JSON.stringify(value)})`);
  }
  return { first, last };
}

/** `host:port` (IPv6 as `[::1]:9464`), or undefined when unset; anything else is a clear error. */
function listenAddress(text: string | undefined, name: string): { host: string; port: number } | undefined {
  if (!text?.trim()) return undefined;
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text.trim());
  const port = match ? Number(match[3]) : NaN;
  if (!match || port > 65535) throw new Error(`${name} must be host:port (e.g. 127.0.0.1:9464), got '${text}'`);
  return { host: match[1] ?? match[2], port };
}

async function main(): Promise<void> {
  const logger = createLogger('gateway'); // DEVICELAB_LOG_LEVEL, quiet (warn) by default like the hub
  const options = optionsFromEnv();
  const gateway = await startGateway({ ...options, logger });
  logger.info({ gateway: options.name, hub: options.hubAddress }, 'gateway started');
  const shutdown = (signal: string) => {
    logger.info({ signal }, 'stopping gateway');
    gateway.stop().then(() => process.exit(0), (err) => {
      logger.error({ err }, 'clean stop failed');
      process.exit(1);
    });
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`devicelab gateway: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
