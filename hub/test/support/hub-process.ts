/**
 * The hub as its own process (`node -r ts-register.cjs hub/src/main.ts serve`) on this test file's database, for
 * tests that must see the process itself: that it stays alive, how much memory it takes (RSS from /proc).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const support = __dirname;
const main = path.join(__dirname, '..', '..', 'src', 'main.ts');

export interface HubProcess {
  child: ChildProcess;
  url: string;
  /** Everything the process printed. */
  output(): string;
  alive(): boolean;
  /** Resident set size now and at its peak (VmRSS, VmHWM), in bytes. */
  memory(): { rss: number; peakRss: number };
  /** fetch against `/apiv1` as the built-in admin. */
  api(pathAndQuery: string, init?: RequestInit): Promise<Response>;
  stop(): Promise<void>;
}

export async function startHubProcess(options: { databaseUrl: string; dataDir: string; adminToken: string;
  env?: Record<string, string> }): Promise<HubProcess> {
  const child = spawn(process.execPath, ['-r', path.join(support, 'ts-register.cjs'), main, 'serve'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env, DATABASE_URL: options.databaseUrl, DEVICELAB_DATA_DIR: options.dataDir, DEVICELAB_PORT: '0',
      DEVICELAB_LINK_PORT: '0', DEVICELAB_HOST: '127.0.0.1', DEVICELAB_ADMIN_TOKEN: options.adminToken, ...options.env,
    },
  });
  let output = '';
  child.stdout!.on('data', (d) => { output += d; });
  child.stderr!.on('data', (d) => { output += d; });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const match = /DeviceLab hub: (\S+)\/apiv1/.exec(output);
      if (match) { clearInterval(timer); resolve(match[1]); }
      if (child.exitCode !== null) { clearInterval(timer); reject(new Error(`the hub exited early:\n${output}`)); }
    }, 100);
  });
  const auth = `Basic ${Buffer.from(`admin:${options.adminToken}`).toString('base64')}`;
  const status = (field: string) => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
    return Number(match![1]) * 1024;
  };
  return {
    child,
    url,
    output: () => output,
    alive: () => child.exitCode === null && child.signalCode === null,
    memory: () => ({ rss: status('VmRSS'), peakRss: status('VmHWM') }),
    api: (pathAndQuery, init = {}) => fetch(`${url}/apiv1${pathAndQuery}`,
      { ...init, headers: { authorization: auth, ...(init.headers as Record<string, string> | undefined) } }),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
