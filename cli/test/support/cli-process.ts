/**
 * Runs the built `devicelab` binary (cli/bin/devicelab.js over cli/dist, what `npx devicelab` and a global install
 * run) as a child process against a test lab, with its own config folder, and collects what it printed and how it
 * exited.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestLab } from '../../../hub/test/support/lab';

export const CLI_MAIN = path.resolve(__dirname, '../../bin/devicelab.js');
const BUILT = path.resolve(__dirname, '../../dist/main.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliUser {
  login: string;
  token: string;
}

/** The environment of a CLI run: the lab's hub, the given user, a private XDG_CONFIG_HOME, no colour hints. */
export function cliEnvironment(lab: TestLab, user: CliUser | undefined, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  if (!existsSync(BUILT)) throw new Error(`${BUILT} is missing: build first (npx tsc -b)`);
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: mkdtempSync(path.join(os.tmpdir(), 'devicelab-cli-config-')) };
  for (const key of ['DEVICELAB_URL', 'DEVICELAB_USER', 'DEVICELAB_TOKEN', 'DEVICELAB_TICKET', 'NO_COLOR', 'ANDROID_SERIAL']) delete env[key];
  if (user) Object.assign(env, { DEVICELAB_URL: lab.hub.url, DEVICELAB_USER: user.login, DEVICELAB_TOKEN: user.token });
  return { ...env, ...extra };
}

export interface StartedCli {
  child: ChildProcess;
  /** Everything printed so far. */
  output(): { stdout: string; stderr: string };
  /** Resolves once stdout or stderr has matched. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  done: Promise<CliResult>;
}

export function startCli(args: string[], env: NodeJS.ProcessEnv, cwd?: string): StartedCli {
  const child = spawn(process.execPath, [CLI_MAIN, ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const listeners = new Set<() => void>();
  const changed = () => listeners.forEach((listener) => listener());
  child.stdout!.on('data', (chunk: Buffer) => { stdout += chunk.toString(); changed(); });
  child.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString(); changed(); });
  const done = new Promise<CliResult>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return {
    child, done,
    output: () => ({ stdout, stderr }),
    waitFor: (pattern, timeoutMs = 30_000) => new Promise<void>((resolve, reject) => {
      const check = () => {
        if (pattern.test(stdout) || pattern.test(stderr)) {
          listeners.delete(check);
          clearTimeout(timer);
          resolve();
        }
      };
      const timer = setTimeout(() => {
        listeners.delete(check);
        reject(new Error(`no ${pattern} within ${timeoutMs} ms; stdout: ${stdout}\nstderr: ${stderr}`));
      }, timeoutMs);
      listeners.add(check);
      void done.then(() => setTimeout(check, 0));
      check();
    }),
  };
}

export function runCli(args: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<CliResult> {
  return startCli(args, env, cwd).done;
}

/** The device as the hub lists it now (to check who holds it). */
export async function deviceState(lab: TestLab, id: string): Promise<{ id: string; retainedById?: string; retainedByUserName?: string }> {
  const [device] = await (await lab.api(lab.admin, `/Device?AnyId=${encodeURIComponent(id)}`)).json() as { id: string; retainedById?: string }[];
  return device;
}
