/**
 * The ways a command that holds devices is told to stop: SIGINT (Ctrl-C), SIGTERM (a cancelled CI job), SIGHUP
 * (a closed terminal), and the end of the process that started it. `npx devicelab` runs devicelab under a
 * shell; a SIGTERM to npx ends that shell and npx but leaves devicelab running, re-parented. Nothing signals
 * devicelab then, so it watches its parent pid and, once it changes, stops as on SIGHUP and releases.
 */
import os from 'node:os';

export type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';

const PARENT_POLL_MS = 500;

/**
 * Calls `onStop` for each stop signal and, with `watchParent`, once when the parent is gone; the returned function
 * stops listening. (`connect` does not watch: started in the background, it is meant to outlive its shell.)
 */
export function onStopSignals(onStop: (signal: StopSignal) => void, { watchParent = true } = {}): () => void {
  const signals: StopSignal[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const signal of signals) process.on(signal, onStop);
  const parent = process.ppid;
  const watch = watchParent ? setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    onStop('SIGHUP');
  }, PARENT_POLL_MS) : undefined;
  watch?.unref();
  return () => {
    clearInterval(watch);
    for (const signal of signals) process.off(signal, onStop);
  };
}

/** The exit code of a command stopped by `signal`, as shells report it (128 + the signal's number). */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (os.constants.signals[signal] ?? 0);
}
