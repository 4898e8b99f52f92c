/**
 * The `simctl` subcommands a gateway sends through node-simctl, answered from the JSON state the way Xcode 15/16
 * answer: `list` (JSON and text), create, boot, bootstatus, shutdown, erase, install, uninstall, launch,
 * terminate, listapps / appinfo (old-style plist text), get_app_container, getenv and `spawn <udid> log`.
 * Failures go to stderr in CoreSimulator's form (`An error was encountered processing the command (domain=…,
 * code=…):` then the reason) with a non-zero exit status.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DEVICE_TYPES, RUNTIMES, SYSTEM_APPS, deviceTypeJson, runtimeJson } from './catalog';
import { formatOpenStep, type OpenStepValue } from './openstep-plist';
import { appendLog, type InstalledSimApp, type SimDeviceRecord, type SimState, type SimStateStore } from './state';
import { followLog, showLog } from './sim-log';

export interface SimctlIo {
  out(text: string): void;
  err(text: string): void;
}

export class SimctlError extends Error {
  constructor(readonly domain: string, readonly code: number, message: string, readonly exitCode = 1) {
    super(message);
  }
}

const SIM_ERROR = 'com.apple.CoreSimulator.SimError';
const stateError = (what: string, state: string) =>
  new SimctlError(SIM_ERROR, 405, `Unable to ${what} in current state: ${state}`, 149);

export async function runSimctl(store: SimStateStore, args: string[], io: SimctlIo): Promise<number> {
  const [subcommand, ...rest] = args;
  try {
    switch (subcommand) {
      case 'list': return list(store, rest, io);
      case 'create': return create(store, rest, io);
      case 'boot': return change(store, rest[0], (d) => boot(d));
      case 'bootstatus': return await bootstatus(store, rest, io);
      case 'shutdown': return change(store, rest[0], (d) => shutdown(d));
      case 'erase': return change(store, rest[0], (d) => erase(store, d));
      case 'install': return change(store, rest[0], (d) => install(store, d, rest[1]));
      case 'uninstall': return change(store, rest[0], (d) => uninstall(d, rest[1]));
      case 'launch': return launch(store, rest, io);
      case 'terminate': return change(store, rest[0], (d) => { requireApp(requireBooted(d, 'terminate'), rest[1]); });
      case 'listapps': return appList(store, rest[0], io);
      case 'appinfo': return appInfo(store, rest, io);
      case 'get_app_container': return appContainer(store, rest, io);
      case 'getenv': return getenv(store, rest, io);
      case 'spawn': return await spawn(store, rest, io);
      default:
        io.err(`Unknown subcommand '${subcommand ?? ''}'\nusage: simctl [--set <path>] [--profiles <path>] <subcommand> ...\n`);
        return 64;
    }
  } catch (err) {
    if (!(err instanceof SimctlError)) throw err;
    io.err(`An error was encountered processing the command (domain=${err.domain}, code=${err.code}):\n${err.message}\n`);
    return err.exitCode;
  }
}

function find(state: SimState, key: string | undefined): SimDeviceRecord {
  const wanted = key ?? '';
  const device = wanted.toLowerCase() === 'booted'
    ? state.devices.find((d) => d.state === 'Booted')
    : state.devices.find((d) => d.udid === wanted.toUpperCase()) ?? state.devices.find((d) => d.name === wanted);
  if (!device) throw new SimctlError('NSPOSIXErrorDomain', 22, `Invalid device: ${wanted}`, 148);
  return device;
}

function change(store: SimStateStore, key: string | undefined, apply: (device: SimDeviceRecord) => void): number {
  store.update((state) => apply(find(state, key)));
  return 0;
}

function requireBooted(device: SimDeviceRecord, what: string): SimDeviceRecord {
  if (device.state !== 'Booted') throw stateError(what, device.state);
  return device;
}

function list(store: SimStateStore, args: string[], io: SimctlIo): number {
  const json = args.includes('-j') || args.includes('--json');
  const what = args.find((a) => !a.startsWith('-'));
  const state = store.read();
  if (json) {
    const all: Record<string, unknown> = {
      devicetypes: DEVICE_TYPES.map(deviceTypeJson),
      runtimes: RUNTIMES.map(runtimeJson),
      devices: devicesJson(store, state),
      pairs: {},
    };
    io.out(`${JSON.stringify(what ? { [what]: all[what] ?? {} } : all, null, 2).replace(/": /g, '" : ')}\n`);
    return 0;
  }
  if (!what || what === 'devices') {
    io.out('== Devices ==\n');
    for (const runtime of RUNTIMES) {
      io.out(`-- ${runtime.name} --\n`);
      for (const d of state.devices.filter((x) => x.runtimeIdentifier === runtime.identifier)) io.out(`    ${d.name} (${d.udid}) (${d.state}) \n`);
    }
  }
  if (!what || what === 'runtimes') {
    io.out('== Runtimes ==\n');
    for (const r of RUNTIMES) io.out(`${r.name} (${r.version} - ${r.buildversion}) - ${r.identifier}\n`);
  }
  return 0;
}

function devicesJson(store: SimStateStore, state: SimState): Record<string, unknown[]> {
  const byRuntime: Record<string, unknown[]> = Object.fromEntries(RUNTIMES.map((r) => [r.identifier, []]));
  for (const d of state.devices) {
    const dataPath = path.join(store.deviceDir(d.udid), 'data');
    (byRuntime[d.runtimeIdentifier] ??= []).push({
      ...(d.lastBootedAt ? { lastBootedAt: d.lastBootedAt } : {}),
      dataPath,
      dataPathSize: directorySize(dataPath),
      logPath: path.join(store.dir, 'Logs', d.udid),
      udid: d.udid,
      isAvailable: true,
      deviceTypeIdentifier: d.deviceTypeIdentifier,
      state: d.state,
      name: d.name,
    });
  }
  return byRuntime;
}

function directorySize(dir: string): number {
  let total = 0;
  const entries = fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }) : [];
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) total += directorySize(full);
    else if (entry.isFile()) total += fs.statSync(full).size;
  }
  return total;
}

function create(store: SimStateStore, [name, typeKey, runtimeKey]: string[], io: SimctlIo): number {
  const type = DEVICE_TYPES.find((t) => t.identifier === typeKey || t.name === typeKey);
  if (!name || !type) throw new SimctlError(SIM_ERROR, 403, `Invalid device type: ${typeKey ?? ''}`, 162);
  const runtime = RUNTIMES.find((r) => r.identifier === runtimeKey || r.name === runtimeKey || r.name.replace(' ', '') === runtimeKey);
  if (!runtime) throw new SimctlError(SIM_ERROR, 404, `Invalid runtime: ${runtimeKey ?? ''}`, 161);
  const udid = randomUUID().toUpperCase();
  store.update((state) => {
    state.devices.push({
      udid, name, deviceTypeIdentifier: type.identifier, runtimeIdentifier: runtime.identifier, state: 'Shutdown',
      apps: [], log: [], nextPid: 100,
    });
  });
  fs.mkdirSync(path.join(store.deviceDir(udid), 'data', 'Containers'), { recursive: true });
  io.out(`${udid}\n`);
  return 0;
}

function boot(device: SimDeviceRecord): void {
  if (device.state === 'Booted') throw stateError('boot device', 'Booted');
  device.state = 'Booted';
  device.lastBootedAt = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  appendLog(device, 'launchd_sim', `Simulator ${device.name} (${device.udid}) booting`);
  appendLog(device, 'SpringBoard', 'Startup complete: SpringBoard is ready');
}

function shutdown(device: SimDeviceRecord): void {
  if (device.state !== 'Booted') throw stateError('shutdown device', device.state);
  appendLog(device, 'launchd_sim', 'Shutdown requested');
  device.state = 'Shutdown';
}

function erase(store: SimStateStore, device: SimDeviceRecord): void {
  if (device.state !== 'Shutdown') throw stateError('erase contents and settings', device.state);
  fs.rmSync(path.join(store.deviceDir(device.udid), 'data'), { recursive: true, force: true });
  fs.mkdirSync(path.join(store.deviceDir(device.udid), 'data', 'Containers'), { recursive: true });
  device.apps = [];
  device.log = [];
  device.lastBootedAt = undefined;
}

/** Booting takes a moment on a real Mac; `bootstatus` watches it and ends once the device is Booted. */
async function bootstatus(store: SimStateStore, [key, ...flags]: string[], io: SimctlIo): Promise<number> {
  let device = find(store.read(), key);
  io.out(`Monitoring boot status for ${device.name} (${device.udid}).\n`);
  if (device.state === 'Booted') {
    io.out('Device already booted, nothing to do.\n');
    return 0;
  }
  if (flags.includes('-b')) {
    change(store, device.udid, boot);
    io.out('Device booted.\n');
    return 0;
  }
  io.out('Waiting on <private>\n');
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    device = find(store.read(), device.udid);
    if (device.state === 'Booted') {
      io.out('Finished.\n');
      return 0;
    }
  }
}

function readBundle(appPath: string | undefined): { info: Record<string, unknown>; dir: string } {
  const failed = (reason: string) => new SimctlError('IXErrorDomain', 13, `Simulator device failed to install the application.\n${reason}`, 1);
  if (!appPath || !fs.existsSync(appPath)) throw new SimctlError('NSPOSIXErrorDomain', 2, 'Failed to install the requested application\nThe specified application path does not exist.', 2);
  if (!fs.statSync(appPath).isDirectory()) throw failed('Missing bundle ID.');
  let info: Record<string, unknown>;
  try {
    // Loaded here, not at the top: every simctl call is a process of its own, and most need no plist reader.
    const { decodePlistDict } = require('@devicelab/shared') as typeof import('@devicelab/shared');
    info = decodePlistDict(fs.readFileSync(path.join(appPath, 'Info.plist')));
  } catch {
    throw failed('Missing bundle ID.');
  }
  if (typeof info.CFBundleIdentifier !== 'string') throw failed('Missing bundle ID.');
  const platforms = Array.isArray(info.CFBundleSupportedPlatforms) ? info.CFBundleSupportedPlatforms.map(String) : [];
  const platform = typeof info.DTPlatformName === 'string' ? info.DTPlatformName : platforms[0];
  if (platform && platform.toLowerCase() !== 'iphonesimulator') {
    throw new SimctlError('IXUserPresentableErrorDomain', 4,
      `Failed to install the requested application\nThe application is built for ${platform} and cannot run on the iOS Simulator.`, 1);
  }
  return { info, dir: appPath };
}

function install(store: SimStateStore, device: SimDeviceRecord, appPath: string | undefined): void {
  requireBooted(device, 'lookup');
  const { info, dir } = readBundle(appPath);
  const bundleId = String(info.CFBundleIdentifier);
  const previous = device.apps.find((a) => a.bundleId === bundleId);
  const containers = path.join(store.deviceDir(device.udid), 'data', 'Containers');
  const bundlePath = path.join(containers, 'Bundle', 'Application', randomUUID().toUpperCase(), path.basename(dir));
  fs.cpSync(dir, bundlePath, { recursive: true });
  if (previous) fs.rmSync(path.dirname(previous.bundlePath), { recursive: true, force: true });
  const dataPath = previous?.dataPath ?? path.join(containers, 'Data', 'Application', randomUUID().toUpperCase());
  fs.mkdirSync(dataPath, { recursive: true });
  const app: InstalledSimApp = {
    bundleId, bundlePath, dataPath,
    name: String(info.CFBundleDisplayName ?? info.CFBundleName ?? bundleId),
    executable: String(info.CFBundleExecutable ?? path.basename(dir, '.app')),
    version: typeof info.CFBundleVersion === 'string' ? info.CFBundleVersion : undefined,
    shortVersion: typeof info.CFBundleShortVersionString === 'string' ? info.CFBundleShortVersionString : undefined,
  };
  device.apps = [...device.apps.filter((a) => a.bundleId !== bundleId), app];
  appendLog(device, 'installcoordinationd', `Install of "${bundleId}" succeeded`);
}

function uninstall(device: SimDeviceRecord, bundleId: string | undefined): void {
  requireBooted(device, 'lookup');
  if (SYSTEM_APPS.some((a) => a.id === bundleId)) {
    throw new SimctlError('IXErrorDomain', 7, `Failed to uninstall the requested application\nThe application ${bundleId} is a system application.`, 1);
  }
  const app = device.apps.find((a) => a.bundleId === bundleId);
  if (!app) return; // simctl uninstall of an app that is not there succeeds
  fs.rmSync(path.dirname(app.bundlePath), { recursive: true, force: true });
  fs.rmSync(app.dataPath, { recursive: true, force: true });
  device.apps = device.apps.filter((a) => a !== app);
  appendLog(device, 'installcoordinationd', `Uninstall of "${bundleId}" succeeded`);
}

function requireApp(device: SimDeviceRecord, bundleId: string | undefined): InstalledSimApp | { bundleId: string; name: string; executable: string } {
  const app = device.apps.find((a) => a.bundleId === bundleId) ?? SYSTEM_APPS.map((s) => ({ bundleId: s.id, name: s.name, executable: s.executable }))
    .find((a) => a.bundleId === bundleId);
  if (!app) {
    throw new SimctlError('FBSOpenApplicationServiceErrorDomain', 4,
      `The request to open "${bundleId ?? ''}" failed.\nUnderlying error (domain=FBSOpenApplicationErrorDomain, code=4):\n\tThe operation couldn’t be completed. Application info provider (FBSApplicationLibrary) returned nil for "${bundleId ?? ''}"`, 4);
  }
  return app;
}

/** `launch [--console|--terminate-running-process|--stdout=…] <udid> <bundle> [args…]` prints `<bundle>: <pid>`. */
function launch(store: SimStateStore, args: string[], io: SimctlIo): number {
  const options = args.filter((a, i) => a.startsWith('--') && args.slice(0, i).every((b) => b.startsWith('--')));
  const [key, bundleId, ...appArgs] = args.slice(options.length);
  const pid = store.update((state) => {
    const device = requireBooted(find(state, key), 'lookup');
    const app = requireApp(device, bundleId);
    appendLog(device, 'SpringBoard', `Launching ${app.bundleId} with arguments [${appArgs.join(', ')}]`);
    const launched = device.nextPid;
    appendLog(device, app.executable, `${app.executable} started; arguments: ${JSON.stringify(appArgs)}`);
    return launched;
  });
  io.out(`${bundleId}: ${pid}\n`);
  return 0;
}

function appEntries(device: SimDeviceRecord): Record<string, OpenStepValue> {
  const runtime = RUNTIMES.find((r) => r.identifier === device.runtimeIdentifier) ?? RUNTIMES[0];
  const root = `/Library/Developer/CoreSimulator/Volumes/iOS_${runtime.buildversion}/Library/Developer/CoreSimulator/Profiles/Runtimes/${runtime.name}.simruntime/Contents/Resources/RuntimeRoot/Applications`;
  const entries: Record<string, OpenStepValue> = {};
  for (const s of SYSTEM_APPS) {
    entries[s.id] = {
      ApplicationType: 'System', Bundle: `file://${root}/${s.executable}.app/`, CFBundleDisplayName: s.name,
      CFBundleExecutable: s.executable, CFBundleIdentifier: s.id, CFBundleName: s.name, CFBundleVersion: '1.0',
      GroupContainers: {}, Path: `${root}/${s.executable}.app`, SBAppTags: [],
    };
  }
  for (const a of device.apps) {
    entries[a.bundleId] = {
      ApplicationType: 'User', Bundle: `file://${a.bundlePath}/`, BundleContainer: `file://${path.dirname(a.bundlePath)}/`,
      CFBundleDisplayName: a.name, CFBundleExecutable: a.executable, CFBundleIdentifier: a.bundleId, CFBundleName: a.name,
      ...(a.shortVersion ? { CFBundleShortVersionString: a.shortVersion } : {}),
      ...(a.version ? { CFBundleVersion: a.version } : {}), DataContainer: `file://${a.dataPath}/`, GroupContainers: {},
      Path: a.bundlePath, SBAppTags: [],
    };
  }
  return entries;
}

function appList(store: SimStateStore, key: string | undefined, io: SimctlIo): number {
  const device = requireBooted(find(store.read(), key), 'lookup');
  io.out(formatOpenStep(appEntries(device)));
  return 0;
}

function appInfo(store: SimStateStore, [key, bundleId]: string[], io: SimctlIo): number {
  const device = requireBooted(find(store.read(), key), 'lookup');
  const entry = appEntries(device)[bundleId ?? ''];
  io.out(formatOpenStep(entry ?? { CFBundleIdentifier: bundleId ?? '' }));
  return 0;
}

function appContainer(store: SimStateStore, [key, bundleId, kind = 'app']: string[], io: SimctlIo): number {
  const device = requireBooted(find(store.read(), key), 'lookup');
  const app = device.apps.find((a) => a.bundleId === bundleId);
  if (!app) throw new SimctlError('NSPOSIXErrorDomain', 2, 'No such file or directory', 2);
  io.out(`${kind === 'data' ? app.dataPath : kind === 'groups' ? '' : app.bundlePath}\n`);
  return 0;
}

function getenv(store: SimStateStore, [key, name]: string[], io: SimctlIo): number {
  const device = requireBooted(find(store.read(), key), 'getenv');
  const home = path.join(store.deviceDir(device.udid), 'data');
  const values: Record<string, string> = {
    HOME: home, SIMULATOR_UDID: device.udid, SIMULATOR_DEVICE_NAME: device.name, TMPDIR: path.join(home, 'tmp'),
    SIMULATOR_RUNTIME_VERSION: RUNTIMES.find((r) => r.identifier === device.runtimeIdentifier)?.version ?? '',
  };
  const value = name ? values[name] : undefined;
  if (value === undefined) throw new SimctlError('NSPOSIXErrorDomain', 2, `Environment variable ${name ?? ''} is not set`, 2);
  io.out(`${value}\n`);
  return 0;
}

/** `spawn <udid> log show …` prints the stored log; `log stream …` follows it until the process is killed. */
async function spawn(store: SimStateStore, [key, program, verb, ...args]: string[], io: SimctlIo): Promise<number> {
  const device = requireBooted(find(store.read(), key), 'spawn');
  if (program !== 'log' || (verb !== 'show' && verb !== 'stream')) {
    throw new SimctlError('NSPOSIXErrorDomain', 2, `posix_spawn failed for ${program ?? ''}: No such file or directory`, 2);
  }
  if (verb === 'show') return showLog(device, args, io);
  return followLog(store, device.udid, io);
}
