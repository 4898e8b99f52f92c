/**
 * The fake Xcode's simulator set: one JSON file in the state directory, read and written under a lock directory
 * so that concurrent `xcrun simctl` processes (two simulators booting at once) do not lose each other's changes.
 * Installed app bundles are copied into the simulator's data directory, as CoreSimulator does.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface InstalledSimApp {
  bundleId: string;
  name: string;
  executable: string;
  version?: string;
  shortVersion?: string;
  /** Directory of the copied `.app`. */
  bundlePath: string;
  dataPath: string;
}

export interface SimDeviceRecord {
  udid: string;
  name: string;
  deviceTypeIdentifier: string;
  runtimeIdentifier: string;
  state: 'Shutdown' | 'Booted' | 'Shutting Down';
  lastBootedAt?: string;
  apps: InstalledSimApp[];
  /** Compact `log` lines, oldest first (bounded). */
  log: string[];
  nextPid: number;
}

export interface SimState {
  devices: SimDeviceRecord[];
}

const MAX_LOG_LINES = 2000;
const LOCK_WAIT_MS = 10_000;

export class SimStateStore {
  constructor(readonly dir: string) {}

  get file(): string {
    return path.join(this.dir, 'simctl-state.json');
  }

  deviceDir(udid: string): string {
    return path.join(this.dir, 'Devices', udid);
  }

  read(): SimState {
    try {
      return JSON.parse(fs.readFileSync(this.file, 'utf8')) as SimState;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { devices: [] };
      throw err;
    }
  }

  /** Runs `change` on the state under the lock and writes the result (atomically, by rename). */
  update<T>(change: (state: SimState) => T): T {
    fs.mkdirSync(this.dir, { recursive: true });
    const lock = path.join(this.dir, 'simctl-state.lock');
    const until = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      try {
        fs.mkdirSync(lock);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || Date.now() > until) throw err;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
      }
    }
    try {
      const state = this.read();
      const result = change(state);
      const temp = `${this.file}.${process.pid}.tmp`;
      fs.writeFileSync(temp, JSON.stringify(state, null, 2));
      fs.renameSync(temp, this.file);
      return result;
    } finally {
      fs.rmSync(lock, { recursive: true, force: true });
    }
  }
}

/** Appends compact-style log lines (`2024-06-01 10:00:00.123 Df Process[pid:tid] text`). */
export function appendLog(device: SimDeviceRecord, process: string, text: string, now = new Date()): void {
  const pid = device.nextPid++;
  device.log.push(`${compactTime(now)} Df ${process}[${pid}:${(pid * 7).toString(16)}] ${text}`);
  if (device.log.length > MAX_LOG_LINES) device.log.splice(0, device.log.length - MAX_LOG_LINES);
}

export function compactTime(date: Date): string {
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} `
    + `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}
