/** Questions about other processes by pid, for the data-dir lock and the stale-postmaster cleanup. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * True when a process with this pid exists and is not a zombie. A zombie (killed but not reaped, e.g. under a
 * container init that does not reap) still answers `kill(pid, 0)` but holds nothing and never exits.
 */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it exists but belongs to another user (e.g. postgres started as the `postgres` user).
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const state = readProcStat(pid)?.state;
  return state !== 'Z' && state !== 'X';
}

function readProcStat(pid: number): { state: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may contain spaces; the state follows the last ')'.
    return { state: stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) };
  } catch {
    return undefined;
  }
}

/** The argument vector of a live process, from /proc on Linux or `ps` elsewhere; undefined when unknown. */
export function processArguments(pid: number): string[] | undefined {
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return raw.split('\0').filter((part) => part.length > 0);
  } catch {
    // not Linux, or the process is gone
  }
  try {
    const line = execFileSync('ps', ['-o', 'command=', '-p', String(pid)], { encoding: 'utf8' }).trim();
    return line ? line.split(/\s+/) : undefined;
  } catch {
    return undefined;
  }
}

/** Polls until the pid is gone or `timeoutMs` passes; resolves true when it is gone. */
export async function waitForProcessExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isProcessAlive(pid)) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}
