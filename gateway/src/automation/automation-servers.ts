/**
 * The gateway's automation servers: one Appium server per Ready device whose platform driver has automation, on
 * the device's port block, with the driver's default capabilities and environment. A server starts at the
 * device's first automation connection (or as soon as the device is Ready, when so configured), is started again
 * when it dies, and is stopped when the device stops being Ready, leaves, or the gateway stops. Each device keeps
 * its server's log lines in a ring bounded by bytes. Which platform a device is stays with the drivers.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import type { AutomationReport, DeviceState } from '@devicelab/proto';
import type { Logger } from '@devicelab/shared';
import type { DeviceAutomation } from '../drivers/device-driver';
import type { BackoffOptions } from '../link/backoff';
import { AppiumLog, type AppiumLogFilter } from './appium-log';
import { AppiumServer } from './appium-server';
import { readAutomationReport } from './automation-info';
import { DEFAULT_AUTOMATION_PORTS, PortBlocks, type AutomationPorts, type PortRange } from './port-blocks';

/** When a device's server starts: at its first automation connection, or as soon as the device is Ready. */
export type AutomationStart = 'first-session' | 'ready';

export interface AutomationOptions {
  start: AutomationStart;
  /** The range the devices' port blocks come from. */
  ports: PortRange;
  /** Bytes of Appium log kept per device. */
  logBytes: number;
  /** APPIUM_HOME: where Appium and its drivers are installed (default: the gateway package's directory). */
  appiumHome: string;
  /** How long a server may take to answer ready. */
  startTimeoutMs?: number;
  restartBackoff?: BackoffOptions;
  /** Between health probes (`GET /status`) of a running server (default 30 s). */
  healthIntervalMs?: number;
}

export const DEFAULT_AUTOMATION_LOG_BYTES = 2 * 1024 * 1024;
/** The log travels to the hub in one link message: it stays well under gRPC's 4 MiB message limit. */
export const MAX_AUTOMATION_LOG_BYTES = 3 * 1024 * 1024;
export const GATEWAY_PACKAGE_DIR = path.resolve(__dirname, '..', '..');

export const DEFAULT_AUTOMATION: AutomationOptions = {
  start: 'first-session', ports: DEFAULT_AUTOMATION_PORTS, logBytes: DEFAULT_AUTOMATION_LOG_BYTES, appiumHome: GATEWAY_PACKAGE_DIR,
};

/** Which platform automation a device has (the driver registry answers). */
export interface AutomationSource {
  automationOf(id: string): DeviceAutomation | undefined;
  automations(): DeviceAutomation[];
}

/** Why a device has no automation server to connect to. */
export class NoAutomationServerError extends Error {}

interface DeviceEntry {
  ready: boolean;
  log: AppiumLog;
  ports?: AutomationPorts;
  server?: AppiumServer;
  /** The server being set up (ports, prepare, spawn); shared by concurrent first connections. */
  starting?: Promise<AppiumServer>;
  stopPrepared?: () => Promise<void>;
}

export class AutomationServers {
  private readonly devices = new Map<string, DeviceEntry>();
  private readonly blocks: PortBlocks;
  private readonly appiumPackageDir: string;
  private report?: Promise<AutomationReport>;
  private stopped = false;
  private readonly sessionListeners: Array<(id: string, running: boolean) => void> = [];

  constructor(private readonly source: AutomationSource, private readonly options: AutomationOptions, private readonly logger: Logger) {
    this.blocks = new PortBlocks(options.ports);
    this.appiumPackageDir = appiumPackageDir(options.appiumHome);
  }

  /** What is installed and what is wrong with it; read once (the installation does not change under a running gateway). */
  automationReport(): Promise<AutomationReport> {
    this.report ??= readAutomationReport({ appiumPackageDir: this.appiumPackageDir, appiumHome: this.options.appiumHome },
      this.source.automations().flatMap((automation) => (automation.check ? [() => automation.check!()] : [])));
    return this.report;
  }

  /** Calls `listener` when an automation session starts on a device that had none, or its last one ends. */
  onSessionChange(listener: (id: string, running: boolean) => void): void {
    this.sessionListeners.push(listener);
  }

  deviceChanged(state: DeviceState): void {
    const id = state.vendorUniqueIdentifier;
    const ready = state.readiness === 'Ready' && this.source.automationOf(id) !== undefined;
    const entry = this.devices.get(id);
    if (!ready) {
      if (entry?.ready) {
        entry.ready = false;
        void this.stopServer(id, entry);
      }
      return;
    }
    const known = entry ?? { ready: true, log: new AppiumLog(this.options.logBytes) };
    known.ready = true;
    this.devices.set(id, known);
    if (this.options.start === 'ready') this.serverFor(id).catch((err: unknown) => this.logger.warn({ err, device: id }, 'automation server not started'));
  }

  deviceRemoved(id: string): void {
    const entry = this.devices.get(id);
    if (!entry) return;
    this.devices.delete(id);
    entry.ready = false;
    // A device back meanwhile keeps its block (its new server may already be on it).
    void this.stopServer(id, entry).then(() => { if (!this.devices.has(id)) this.blocks.release(id); });
  }

  /**
   * The port of the device's running server, started now if it is not running yet; resolves once it answers
   * ready. Rejects with NoAutomationServerError when the device has no automation here.
   */
  async serverFor(id: string): Promise<number> {
    const entry = this.devices.get(id);
    const automation = this.source.automationOf(id);
    if (this.stopped) throw new NoAutomationServerError('the gateway is stopping');
    if (!entry?.ready || !automation) {
      throw new NoAutomationServerError(entry || automation ? 'the device is not Ready' : 'the device has no automation on this gateway');
    }
    if (!entry.server) entry.starting ??= this.startServer(id, entry, automation).finally(() => { entry.starting = undefined; });
    const server = entry.server ?? await entry.starting!;
    await server.ready();
    return server.port;
  }

  /** The port of the device's server when it is up and ready now; undefined otherwise. */
  runningPort(id: string): number | undefined {
    const server = this.devices.get(id)?.server;
    return server?.state === 'ready' ? server.port : undefined;
  }

  /** The device's server, when one was started (tests, diagnostics). */
  serverOf(id: string): AppiumServer | undefined {
    return this.devices.get(id)?.server;
  }

  /** The device's kept log lines (JSON lines, newline separated): all, or those of a session / request. */
  log(id: string, filter: AppiumLogFilter = {}): string {
    return this.devices.get(id)?.log.read(filter) ?? '';
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.devices].map(([id, entry]) => this.stopServer(id, entry)));
  }

  private async startServer(id: string, entry: DeviceEntry, automation: DeviceAutomation): Promise<AppiumServer> {
    entry.ports ??= await this.blocks.assign(id);
    const ports = entry.ports;
    if (!ports) throw new NoAutomationServerError('every automation port block of this gateway is taken');
    const environment = (await automation.environment?.()) ?? {};
    entry.stopPrepared = await automation.prepare?.(id, ports);
    if (!entry.ready || this.stopped) {
      await entry.stopPrepared?.();
      entry.stopPrepared = undefined;
      throw new NoAutomationServerError('the device is not Ready');
    }
    entry.server = new AppiumServer({
      device: id, appiumPackageDir: this.appiumPackageDir, appiumHome: this.options.appiumHome, port: ports.appium,
      appiumDriver: automation.appiumDriver, defaultCapabilities: automation.capabilities(id, ports), environment,
      log: entry.log, logger: this.logger, startTimeoutMs: this.options.startTimeoutMs, restartBackoff: this.options.restartBackoff,
      healthIntervalMs: this.options.healthIntervalMs,
      sessionsChanged: (running) => {
        for (const listener of this.sessionListeners) listener(id, running);
      },
    });
    return entry.server;
  }

  private async stopServer(id: string, entry: DeviceEntry): Promise<void> {
    await entry.starting?.catch(() => undefined);
    const { server, stopPrepared } = entry;
    entry.server = undefined;
    entry.stopPrepared = undefined;
    await server?.stop().catch((err: unknown) => this.logger.warn({ err, device: id }, 'stopping the automation server failed'));
    await stopPrepared?.().catch((err: unknown) => this.logger.warn({ err, device: id }, 'stopping what the automation server used failed'));
  }
}

/** Appium's package directory as Node resolves it from APPIUM_HOME (its own node_modules first). */
function appiumPackageDir(appiumHome: string): string {
  try {
    return path.dirname(createRequire(path.join(appiumHome, 'package.json')).resolve('appium/package.json'));
  } catch {
    return path.join(appiumHome, 'node_modules', 'appium');
  }
}
