/**
 * The hub as its own process (`node -r ts-register.cjs hub/src/main.ts serve`), for tests that must see the process
 * itself: that it stays alive, how much memory it takes (RSS from /proc), how it stops. `databaseUrl: ''` runs it on
 * its own embedded PostgreSQL in `dataDir`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const support = __dirname;
const main = path.join(__dirname, '..', '..', 'src', 'main.ts');

export interface HubProcess {
  child: ChildProcess;
  url: string;
  /** Port of its gateway link (gRPC). */
  linkPort: number;
  /** Everything the process printed. */
  output(): string;
  alive(): boolean;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  /** Resident set size now and at its peak (VmRSS, VmHWM), in bytes. */
  memory(): { rss: number; peakRss: number };
  /** fetch against `/apiv1` as the built-in admin. */
  api(pathAndQuery: string, init?: RequestInit): Promise<Response>;
  stop(): Promise<void>;
  /** Ctrl-C: SIGINT to the whole process group (with `processGroup`); resolves with the exit code. */
  interrupt(): Promise<number | null>;
}

export async function startHubProcess(options: { databaseUrl: string; dataDir: string; adminToken: string;
  env?: Record<string, string>; /** Leader of a new process group, as a shell starts a foreground command. */ processGroup?: boolean;
}): Promise<HubProcess> {
  const child = spawn(process.execPath, ['-r', path.join(support, 'ts-register.cjs'), main, 'serve'], {
    detached: options.processGroup ?? false,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env, DATABASE_URL: options.databaseUrl, DEVICELAB_DATA_DIR: options.dataDir, DEVICELAB_PORT: '0',
      DEVICELAB_LINK_PORT: '0', DEVICELAB_HOST: '127.0.0.1', DEVICELAB_ADMIN_TOKEN: options.adminToken, ...options.env,
    },
  });
  let output = '';
  child.stdout!.on('data', (d) => { output += d; });
  child.stderr!.on('data', (d) => { output += d; });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const alive = () => child.exitCode === null && child.signalCode === null;
  const [url, linkPort] = await new Promise<[string, number]>((resolve, reject) => {
    const timer = setInterval(() => {
      const match = /DeviceLab hub: (\S+)\/apiv1 \(gateway link on port (\d+)\)/.exec(output);
      if (match) { clearInterval(timer); resolve([match[1], Number(match[2])]); }
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
    linkPort,
    output: () => output,
    alive,
    exited,
    memory: () => ({ rss: status('VmRSS'), peakRss: status('VmHWM') }),
    api: (pathAndQuery, init = {}) => fetch(`${url}/apiv1${pathAndQuery}`,
      { ...init, headers: { authorization: auth, ...(init.headers as Record<string, string> | undefined) } }),
    async stop() {
      if (alive()) child.kill('SIGTERM');
      await exited;
    },
    async interrupt() {
      if (alive()) process.kill(options.processGroup ? -child.pid! : child.pid!, 'SIGINT');
      return exited;
    },
  };
}
