/**
 * The command `run` starts, in a process group of its own (a detached spawn): a signal or the timeout reaches
 * every process the command started (a shell's background jobs, a test runner's workers), not only the first,
 * and whatever the command leaves running when it ends is ended too, so nothing of it outlives the devices'
 * release.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** How long the group has between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 10_000;
const POLL_MS = 100;

export class CommandGroup {
  readonly child: ChildProcess;

  constructor(command: string[], options: Omit<SpawnOptions, 'detached'>) {
    // detached: the child calls setsid(), so its pid is the id of its new process group.
    this.child = spawn(command[0], command.slice(1), { ...options, detached: true });
  }

  /** Sends `signal` to every process of the group; false when the group is gone (or never started). */
  signal(signal: NodeJS.Signals): boolean {
    if (this.child.pid === undefined) return false;
    try {
      process.kill(-this.child.pid, signal);
      return true;
    } catch {
      return false;
    }
  }

  /** Whether a process of the group still runs. */
  alive(): boolean {
    return this.child.pid !== undefined && groupAlive(this.child.pid);
  }

  /** SIGTERM to the whole group, SIGKILL to what is left after `graceMs`; resolves once none of it runs. */
  async end(graceMs = KILL_GRACE_MS): Promise<void> {
    if (!this.alive() || !this.signal('SIGTERM')) return;
    const deadline = Date.now() + graceMs;
    while (this.alive()) {
      if (Date.now() >= deadline) {
        this.signal('SIGKILL');
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }
}

/**
 * Whether a process of group `pgid` runs. On Linux from /proc, so that zombies do not count: an orphaned
 * member that ended is reaped by PID 1, which in a container is often a program that never reaps.
 */
function groupAlive(pgid: number): boolean {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  }
  return entries.some((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // `pid (comm) state ppid pgrp ...`; comm may itself hold spaces and parentheses.
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return Number(pgrp) === pgid && state !== 'Z';
    } catch {
      return false; // it ended while we looked
    }
  });
}
