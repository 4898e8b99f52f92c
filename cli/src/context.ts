/** What every command action gets: its output, the API client (credentials resolved on first use), its options. */
import type { Command } from 'commander';
import { ApiClient } from './api-client';
import { resolveCredentials, stderrStyle, type GlobalOptions } from './config';
import { CliError, EXIT, usageError } from './errors';
import { Output, parseDuration } from './output';

export interface Context {
  out: Output;
  api(): ApiClient;
  globals: GlobalOptions & { json?: boolean };
}

export function createContext(command: Command): Context {
  const globals = command.optsWithGlobals() as GlobalOptions & { json?: boolean };
  const out = new Output(Boolean(globals.json), stderrStyle());
  let api: ApiClient | undefined;
  return { out, globals, api: () => (api ??= new ApiClient(resolveCredentials(globals))) };
}

/** The exit code a command ends with (set by `run`, which exits with its command's code). */
export type ActionResult = number | void;

/**
 * Wraps a command's action: builds its context, runs it, and turns a thrown CliError (or any error) into its
 * message on stderr and the process exit code.
 */
export function action<A extends unknown[]>(body: (ctx: Context, ...args: A) => Promise<ActionResult>) {
  return async (...args: unknown[]): Promise<void> => {
    const command = args[args.length - 1] as Command;
    const positional = args.slice(0, -1) as A;
    const ctx = createContext(command);
    try {
      const code = await body(ctx, ...positional);
      process.exitCode = typeof code === 'number' ? code : EXIT.ok;
    } catch (err) {
      ctx.out.clearProgress();
      if (err instanceof CliError) {
        ctx.out.error(err.message);
        process.exitCode = err.exitCode;
      } else {
        ctx.out.error(`${(err as Error).stack ?? String(err)}\nThis is a bug in devicelab; please report it with the command you ran.`);
        process.exitCode = EXIT.apiFailure;
      }
    }
  };
}

export function durationOption(value: string | undefined, name: string, fallbackMs: number): number {
  if (value === undefined) return fallbackMs;
  const ms = parseDuration(value);
  if (ms === undefined) throw usageError(`${name} ${value}: give a duration such as 90s, 10m or 1h30m.`);
  return ms;
}

export function positiveInt(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw usageError(`${name} ${value}: give a whole number of at least 1.`);
  return Number(value);
}

export { CliError, EXIT };
