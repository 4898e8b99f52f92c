/**
 * An exclusive lock on a DeviceLab data directory: a lock file holding the owner's pid. Two hubs on one
 * embedded PostgreSQL data directory would fight over the postmaster (and the second one would "clean up" the
 * first one's server as stale), so the second refuses to start. A lock left by a killed process (its pid is
 * no longer a live node process) is taken over.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { isProcessAlive, processArguments } from './process-liveness';

export const LOCK_FILE_NAME = 'devicelab.lock';

export class DataDirLockedError extends Error {
  constructor(readonly dataDir: string, readonly holderPid: number) {
    super(
      `The DeviceLab data directory ${dataDir} is in use by another running DeviceLab (pid ${holderPid}). ` +
        `Stop that process, or set DEVICELAB_DATA_DIR to another directory.`,
    );
    this.name = 'DataDirLockedError';
  }
}

export interface DataDirLock {
  readonly path: string;
  /** Removes the lock file if it is still ours. Idempotent. */
  release(): Promise<void>;
}

/**
 * Takes the lock or throws DataDirLockedError. Creating the file with O_EXCL makes the common case atomic;
 * taking over a stale lock (unlink + create) has a small window in which two starters that both saw the same
 * dead pid could race; the loser then fails on the postmaster's own lock instead.
 */
export async function acquireDataDirLock(dataDir: string): Promise<DataDirLock> {
  const lockPath = path.join(dataDir, LOCK_FILE_NAME);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await fs.writeFile(lockPath, `${process.pid}\n`, { flag: 'wx', mode: 0o644 });
      return ownedLock(lockPath);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = await readHolderPid(lockPath);
    if (holder !== undefined && isLiveLockHolder(holder)) throw new DataDirLockedError(dataDir, holder);
    await fs.rm(lockPath, { force: true });
  }
  throw new Error(`could not take the lock ${lockPath}: it keeps reappearing`);
}

async function readHolderPid(lockPath: string): Promise<number | undefined> {
  const text = await fs.readFile(lockPath, 'utf8').catch(() => '');
  const pid = Number.parseInt(text.trim(), 10);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * Our own pid counts as a holder: a second start in one process is a bug, not a stale lock. Another pid counts
 * when it is alive and (where we can tell) a node process, so a pid recycled by an unrelated program after a
 * crash does not block the lab forever.
 */
function isLiveLockHolder(pid: number): boolean {
  if (pid === process.pid) return true;
  if (!isProcessAlive(pid)) return false;
  const argv = processArguments(pid);
  if (argv === undefined || argv.length === 0) return true;
  return /node|devicelab|jest/i.test(path.basename(argv[0])) || argv.some((a) => /devicelab|jest/i.test(a));
}

function ownedLock(lockPath: string): DataDirLock {
  let released = false;
  return {
    path: lockPath,
    async release() {
      if (released) return;
      released = true;
      if ((await readHolderPid(lockPath)) === process.pid) await fs.rm(lockPath, { force: true });
    },
  };
}
