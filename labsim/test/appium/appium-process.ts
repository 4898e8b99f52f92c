/**
 * A real Appium server (gateway's appium 3 with its installed drivers) as a child process, logging JSON, with an
 * Android SDK root whose platform-tools/adb is the host's adb: what a gateway runs per device.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { ephemeralPort } from '../../src/util/ports';

const ROOT = path.join(__dirname, '..', '..', '..');
const APPIUM_HOME = path.join(ROOT, 'gateway');

/** The adb on PATH, as an absolute path (appium-adb wants it inside an SDK root). */
function hostAdb(): string {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'adb');
    if (fs.existsSync(candidate)) return fs.realpathSync(candidate);
  }
  throw new Error('adb is not on PATH');
}

export interface AppiumServer {
  url: string;
  port: number;
  /** The JSON log lines so far (message and context). */
  log: Array<{ message: string; context?: Record<string, unknown> }>;
  stop(): Promise<void>;
}

export async function startAppium(env: Record<string, string> = {}): Promise<AppiumServer> {
  const sdk = fs.mkdtempSync(path.join(os.tmpdir(), 'labsim-sdk-'));
  fs.mkdirSync(path.join(sdk, 'platform-tools'));
  fs.symlinkSync(hostAdb(), path.join(sdk, 'platform-tools', 'adb'));
  const port = await ephemeralPort();
  const child: ChildProcess = spawn(process.execPath, [path.join(APPIUM_HOME, 'node_modules', 'appium', 'index.js'), '--port', String(port), '--address', '127.0.0.1', '--log-format', 'json', '--log-level', 'debug'], {
    env: { ...process.env, APPIUM_HOME, ANDROID_HOME: sdk, ANDROID_SDK_ROOT: sdk, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log: AppiumServer['log'] = [];
  for (const stream of [child.stdout!, child.stderr!]) {
    createInterface({ input: stream }).on('line', (line) => {
      try {
        log.push(JSON.parse(line) as AppiumServer['log'][number]);
      } catch {
        log.push({ message: line });
      }
    });
  }
  const stop = async () => {
    // A copy of the log for whoever debugs a run (never read by the tests).
    if (process.env.LABSIM_APPIUM_LOG) fs.writeFileSync(process.env.LABSIM_APPIUM_LOG, log.map((l) => l.message).join('\n') + '\n');
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    fs.rmSync(sdk, { recursive: true, force: true });
  };
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`appium exited with ${child.exitCode}: ${log.slice(-5).map((l) => l.message).join('\n')}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/status`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error('appium did not start within 90 s');
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { url: `http://127.0.0.1:${port}`, port, log, stop };
}
