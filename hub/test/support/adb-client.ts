/**
 * A user's own adb client for access tests and benchmarks: its own HOME with its own key pair
 * (`$HOME/.android/adbkey(.pub)`, made by `adb keygen`) and its own adb server on its own port, so two users'
 * keys never mix and no other adb server on the machine is touched. `stop()` kills only this server.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, mkdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface AdbClient {
  home: string;
  /** The environment its adb commands run with (HOME, ANDROID_ADB_SERVER_PORT), for a program that runs adb itself. */
  env: NodeJS.ProcessEnv;
  /** The text of adbkey.pub (what the user registers). */
  publicKey: string;
  adb(args: string[], timeoutMs?: number): Promise<{ stdout: string; stderr: string; ok: boolean }>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export async function startAdbClient(name: string): Promise<AdbClient> {
  const home = mkdtempSync(path.join(os.tmpdir(), `devicelab-adbuser-${name}-`));
  mkdirSync(path.join(home, '.android'));
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, ANDROID_ADB_SERVER_PORT: String(await freePort()) };
  delete env.ADB_VENDOR_KEYS; // only this user's own key
  await run('adb', ['keygen', path.join(home, '.android', 'adbkey')], { env });
  const adb = async (args: string[], timeoutMs = 30_000) => {
    try {
      const { stdout, stderr } = await run('adb', args, { env, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 });
      return { stdout, stderr, ok: true };
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      return { stdout: e.stdout ?? '', stderr: e.stderr ?? String(err), ok: false };
    }
  };
  await adb(['start-server']);
  return {
    home,
    env,
    publicKey: readFileSync(path.join(home, '.android', 'adbkey.pub'), 'utf8'),
    adb,
    async stop() {
      await adb(['kill-server'], 10_000);
      rmSync(home, { recursive: true, force: true });
    },
  };
}
