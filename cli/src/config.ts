/**
 * Everything `devicelab` reads from its environment, in one module: the hub address and credentials
 * (--url/--user/--token, else DEVICELAB_URL/_USER/_TOKEN, else the file `devicelab login` wrote), the config file's
 * place, whether to colour, and the environment a `run` command inherits. Other modules receive typed values.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CliError, EXIT, usageError } from './errors';

export interface Credentials {
  /** Base of the API, ending in `/apiv1` (no trailing slash). */
  apiBase: string;
  /** The address as the user gave it (for messages). */
  url: string;
  user: string;
  token: string;
  /** Where each value came from, for messages: `--url`, `DEVICELAB_URL` or the config file. */
  source: { url: string; user: string; token: string };
}

export interface ConfigFile {
  url?: string;
  user?: string;
  token?: string;
}

export interface GlobalOptions {
  url?: string;
  user?: string;
  token?: string;
}

/** `$XDG_CONFIG_HOME/devicelab/config.json`, else `~/.config/devicelab/config.json`. */
export function configFilePath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME)
    ? env.XDG_CONFIG_HOME : path.join(env.HOME || os.homedir(), '.config');
  return path.join(base, 'devicelab', 'config.json');
}

export function readConfigFile(file = configFilePath()): ConfigFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new CliError(`Cannot read ${file}: ${(err as Error).message}. Fix its permissions or run \`devicelab login\` again.`, EXIT.usage);
  }
  try {
    const value = JSON.parse(text) as unknown;
    if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error('not a JSON object');
    const pick = (key: string): string | undefined => {
      const v = (value as Record<string, unknown>)[key];
      return typeof v === 'string' && v !== '' ? v : undefined;
    };
    return { url: pick('url'), user: pick('user'), token: pick('token') };
  } catch (err) {
    throw new CliError(`${file} is not valid JSON (${(err as Error).message}). Run \`devicelab login\` to write it again.`, EXIT.usage);
  }
}

/** Writes the file readable by its owner only (0600, its folder 0700): it holds an API token. */
export function writeConfigFile(config: ConfigFile, file = configFilePath()): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600); // an existing umask or file mode never widens it
  renameSync(temporary, file);
}

/** The API base for an address such as `http://hub:8080`, `http://hub:8080/` or `http://hub:8080/apiv1`. */
export function apiBaseOf(url: string, source: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw usageError(`${source} is not a URL: '${url}'. Give the hub's address, e.g. http://devicelab.example:8080.`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw usageError(`${source} must be an http:// or https:// address, not '${url}'.`);
  }
  const trimmed = `${parsed.origin}${parsed.pathname}`.replace(/\/+$/, '').replace(/\/apiv1$/i, '');
  return `${trimmed}/apiv1`;
}

/** The hub and credentials of this invocation; fails with what to set when one is missing. */
export function resolveCredentials(flags: GlobalOptions, env: NodeJS.ProcessEnv = process.env): Credentials {
  const file = configFilePath(env);
  const stored = readConfigFile(file);
  const pick = (flag: string | undefined, flagName: string, variable: string, fromFile: string | undefined) => {
    if (flag) return { value: flag, source: flagName };
    if (env[variable]) return { value: env[variable]!, source: variable };
    if (fromFile) return { value: fromFile, source: file };
    return undefined;
  };
  const url = pick(flags.url, '--url', 'DEVICELAB_URL', stored.url);
  const user = pick(flags.user, '--user', 'DEVICELAB_USER', stored.user);
  const token = pick(flags.token, '--token', 'DEVICELAB_TOKEN', stored.token);
  const missing = [!url && 'the hub address', !user && 'your login', !token && 'your API token'].filter(Boolean);
  if (!url || !user || !token) {
    throw new CliError(`Not configured: ${missing.join(', ')}. Run \`devicelab login\`, or set DEVICELAB_URL, DEVICELAB_USER `
      + 'and DEVICELAB_TOKEN (or pass --url, --user, --token).', EXIT.notAuthorised);
  }
  return {
    apiBase: apiBaseOf(url.value, url.source), url: url.value, user: user.value, token: token.value,
    source: { url: url.source, user: user.source, token: token.source },
  };
}

/** A retain ticket's hub and authenticator (`connect --ticket`, else DEVICELAB_TICKET); undefined without one. */
export interface TicketAccess {
  apiBase: string;
  authenticator: string;
}

export function resolveTicket(flags: GlobalOptions & { ticket?: string }, env: NodeJS.ProcessEnv = process.env): TicketAccess | undefined {
  const authenticator = flags.ticket || env.DEVICELAB_TICKET?.trim();
  if (!authenticator) return undefined;
  const file = configFilePath(env);
  const url = flags.url ? { value: flags.url, source: '--url' }
    : env.DEVICELAB_URL ? { value: env.DEVICELAB_URL, source: 'DEVICELAB_URL' }
      : { value: readConfigFile(file).url, source: file };
  if (!url.value) {
    throw new CliError('A ticket needs the hub address: set DEVICELAB_URL or pass --url (or run `devicelab login` once).', EXIT.usage);
  }
  return { apiBase: apiBaseOf(url.value, url.source), authenticator };
}

/** Colour and live progress only on a terminal, and never with NO_COLOR (https://no-color.org). */
export function stderrStyle(env: NodeJS.ProcessEnv = process.env): { tty: boolean; colour: boolean } {
  const tty = Boolean(process.stderr.isTTY);
  return { tty, colour: tty && !env.NO_COLOR && env.TERM !== 'dumb' };
}

/** The environment of a command `devicelab run` starts: ours plus what it learned about the devices. */
export function childEnvironment(extra: Record<string, string>, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, ...extra };
}

/** The adb binary `run` and `connect --adb` call (ADB, as Android's own tools read it, else adb on PATH). */
export function adbBinary(env: NodeJS.ProcessEnv = process.env): string {
  return env.ADB || 'adb';
}

/** Where the user's adb server keeps its public key (as adb itself looks: ANDROID_USER_HOME, else ~/.android). */
export function adbPublicKeyFile(env: NodeJS.ProcessEnv = process.env): string {
  if (env.ANDROID_USER_HOME) return path.join(env.ANDROID_USER_HOME, 'adbkey.pub');
  if (env.ANDROID_SDK_HOME) return path.join(env.ANDROID_SDK_HOME, '.android', 'adbkey.pub');
  return path.join(env.HOME || os.homedir(), '.android', 'adbkey.pub');
}

/**
 * The lease name this invocation retains under: `DEVICELAB_LEASE` when set (one CI job sharing its devices across
 * commands), else one of its own (host, pid and a random part), so two jobs of one login never share a device.
 */
export function leaseName(env: NodeJS.ProcessEnv = process.env): string {
  const given = env.DEVICELAB_LEASE?.trim();
  if (given) return given;
  return `${os.hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 10)}`;
}
