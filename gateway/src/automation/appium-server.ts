/**
 * One Appium server process for one device: spawned in its own process group with the device's default
 * capabilities, its JSON log lines read into the device's log, healthy once `GET /status` answers ready, spawned
 * again (with backoff) when it dies, and its whole group ended by `stop()`. The child watches its parent: when the
 * gateway dies without stopping it (SIGKILL), the child ends its group itself, so no Appium outlives its gateway.
 */
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import readline from 'node:readline';
import type { Logger } from '@devicelab/shared';
import { Backoff, type BackoffOptions } from '../link/backoff';
import { signalGroup, spawnAppium } from './appium-child';
import type { AppiumLog } from './appium-log';

export interface AppiumServerSpec {
  /** The device (for logs). */
  device: string;
  /** Appium's package directory (holds index.js and build/lib/main.js). */
  appiumPackageDir: string;
  /** APPIUM_HOME: where Appium finds its drivers. */
  appiumHome: string;
  port: number;
  /** The one driver this server loads (`--use-drivers`): less memory and a faster start than all of them. */
  appiumDriver: string;
  defaultCapabilities: Record<string, unknown>;
  environment: Record<string, string>;
  log: AppiumLog;
  logger: Logger;
  /** How long a start may take until `/status` answers ready. */
  startTimeoutMs?: number;
  restartBackoff?: BackoffOptions;
  /** Between `/status` probes of a running server; three unanswered in a row and it is killed (then started again). */
  healthIntervalMs?: number;
  /** Whether any session runs on the server changed (the server's log says so; a dead or stopped server has none). */
  sessionsChanged?: (running: boolean) => void;
}

/**
 * Appium's lines when a session joins or leaves its session list (appium.js, Appium 2 and 3): the moments a
 * session is usable on the device and over. Read from the log the server writes anyway, so no request of ours
 * goes to the server (its session list endpoint is an insecure feature we keep off).
 */
const SESSION_ADDED = /session created successfully, session (\S+) added to master session list/;
const SESSION_REMOVED = /Removing session '?([^'\s"]+)'? from our master session list/;

/** Unanswered `/status` probes in a row after which a running server counts as hung. */
const HEALTH_FAILURES = 3;

export type AppiumServerState = 'starting' | 'ready' | 'restarting' | 'stopped';

export class AppiumServer {
  private child?: ChildProcess;
  private stateValue: AppiumServerState = 'starting';
  private readonly backoff: Backoff;
  private restartTimer?: NodeJS.Timeout;
  private readyWaiters: Array<{ resolve(): void; reject(err: Error): void }> = [];
  private healthTimer?: NodeJS.Timeout;
  /** How many times the process was spawned (the first start included). */
  spawns = 0;
  /** Milliseconds from spawn to the first ready `/status` of the last start. */
  lastStartMs?: number;
  /** Sessions the server holds now, as its log told. */
  private readonly sessions = new Set<string>();

  constructor(private readonly spec: AppiumServerSpec) {
    this.backoff = new Backoff(spec.restartBackoff ?? { initialMs: 500, maxMs: 30_000 });
    this.spawn();
  }

  get state(): AppiumServerState {
    return this.stateValue;
  }

  get port(): number {
    return this.spec.port;
  }

  /** The process id of the running server (tests, diagnostics). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Resolves once the server answers ready; rejects when it is stopped first. */
  ready(): Promise<void> {
    if (this.stateValue === 'ready') return Promise.resolve();
    if (this.stateValue === 'stopped') return Promise.reject(new Error('the automation server was stopped'));
    return new Promise((resolve, reject) => this.readyWaiters.push({ resolve, reject }));
  }

  /** Ends the process group: SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
  async stop(graceMs = 5_000): Promise<void> {
    if (this.stateValue === 'stopped') return;
    this.stateValue = 'stopped';
    clearTimeout(this.restartTimer);
    clearTimeout(this.healthTimer);
    this.settleWaiters(new Error('the automation server was stopped'));
    this.setSessions(() => this.sessions.clear());
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    signalGroup(child, 'SIGTERM');
    const kill = setTimeout(() => signalGroup(child, 'SIGKILL'), graceMs);
    await exited;
    clearTimeout(kill);
    // Whatever the server started in its group (adb clients) goes with it.
    signalGroup(child, 'SIGKILL');
  }

  private spawn(): void {
    const { spec } = this;
    this.spawns++;
    this.stateValue = 'starting';
    const spawnedAt = Date.now();
    const child = spawnAppium(spec.appiumPackageDir, [
      'server',
      '--address', '127.0.0.1', '--port', String(spec.port),
      '--log-format', 'json', '--log-timestamp', '--log-no-colors', '--log-level', 'info',
      '--use-drivers', spec.appiumDriver,
      '--default-capabilities', JSON.stringify(spec.defaultCapabilities),
    ], { ...spec.environment, APPIUM_HOME: spec.appiumHome });
    this.child = child;
    for (const stream of [child.stdout, child.stderr]) {
      if (stream) {
        readline.createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
          spec.log.add(line);
          if (this.child === child && line.includes('master session list')) this.noteSessionLine(line);
        });
      }
    }
    child.once('error', (err) => spec.logger.warn({ err, device: spec.device }, 'the automation server could not be started'));
    child.once('exit', (code, signal) => {
      clearTimeout(this.healthTimer);
      if (this.child === child) this.setSessions(() => this.sessions.clear());
      if (this.child !== child || this.stateValue === 'stopped') return;
      spec.logger.warn({ device: spec.device, code, signal }, 'the automation server exited; starting it again');
      signalGroup(child, 'SIGKILL');
      this.stateValue = 'restarting';
      this.restartTimer = setTimeout(() => this.spawn(), this.backoff.next());
    });
    void this.waitReady(child, spawnedAt);
  }

  /** Polls `/status` until it answers ready, the process exits, or the start deadline passes (then it is killed). */
  private async waitReady(child: ChildProcess, spawnedAt: number): Promise<void> {
    const deadline = spawnedAt + (this.spec.startTimeoutMs ?? 120_000);
    while (this.child === child && child.exitCode === null && child.signalCode === null && this.stateValue !== 'stopped') {
      if (await statusReady(this.spec.port)) {
        if (this.child !== child || this.stopped()) return;
        this.stateValue = 'ready';
        this.lastStartMs = Date.now() - spawnedAt;
        this.backoff.reset();
        this.settleWaiters();
        this.watchHealth(child);
        return;
      }
      if (Date.now() > deadline) {
        this.spec.logger.warn({ device: this.spec.device }, 'the automation server did not become ready in time; killing it');
        signalGroup(child, 'SIGKILL');
        return;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** Probes `/status` while the server runs; a hung one (its process alive, its HTTP silent) is killed. */
  private watchHealth(child: ChildProcess, failures = 0): void {
    const intervalMs = this.spec.healthIntervalMs ?? 30_000;
    this.healthTimer = setTimeout(() => {
      void statusReady(this.spec.port, Math.min(10_000, intervalMs)).then((ready) => {
        if (this.child !== child || this.stopped() || child.exitCode !== null || child.signalCode !== null) return;
        const failed = ready ? 0 : failures + 1;
        if (failed < HEALTH_FAILURES) return this.watchHealth(child, failed);
        this.spec.logger.warn({ device: this.spec.device }, `the automation server did not answer ${HEALTH_FAILURES} status probes; killing it`);
        signalGroup(child, 'SIGKILL');
      });
    }, intervalMs);
    this.healthTimer.unref();
  }

  private noteSessionLine(line: string): void {
    const added = SESSION_ADDED.exec(line)?.[1];
    const removed = SESSION_REMOVED.exec(line)?.[1];
    this.setSessions(() => {
      if (added) this.sessions.add(added);
      if (removed) this.sessions.delete(removed);
    });
  }

  /** Applies a change to the session set and tells when "any session runs" flipped. */
  private setSessions(change: () => void): void {
    const before = this.sessions.size > 0;
    change();
    const after = this.sessions.size > 0;
    if (before !== after) this.spec.sessionsChanged?.(after);
  }

  private stopped(): boolean {
    return this.stateValue === 'stopped';
  }

  private settleWaiters(err?: Error): void {
    const waiters = this.readyWaiters;
    this.readyWaiters = [];
    for (const waiter of waiters) {
      if (err) waiter.reject(err);
      else waiter.resolve();
    }
  }
}

/** True when Appium's `GET /status` on the port answers `value.ready`. */
export function statusReady(port: number, timeoutMs = 2_000): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get({ host: '127.0.0.1', port, path: '/status', timeout: timeoutMs, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= 64 * 1024) chunks.push(chunk);
      });
      response.on('end', () => {
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { value?: { ready?: unknown } };
          resolve(response.statusCode === 200 && body?.value?.ready === true);
        } catch {
          resolve(false);
        }
      });
      response.on('error', () => resolve(false));
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
  });
}
