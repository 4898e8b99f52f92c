/**
 * A task repeated every `intervalMs` that never overlaps itself: a tick that is still running when the next is
 * due makes that next tick wait (a slow device is sampled less often, never in parallel with itself). The
 * tick gets `active()` to check before it writes (a tick finishing after `stop()` writes nothing). The
 * first tick comes after a random part of the interval so many devices do not all fire at the same instant.
 */
export interface Periodic {
  /** No tick starts after this; resolves once a tick still running has finished (its device reads included). */
  stop(): Promise<void>;
}

export function startPeriodic(intervalMs: number, tick: (active: () => boolean) => Promise<void>, random: () => number = Math.random): Periodic {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const schedule = (delay: number) => {
    if (stopped) return;
    timer = setTimeout(run, Math.max(0, delay));
  };
  const run = () => {
    const started = Date.now();
    running = tick(() => !stopped).catch(() => undefined).finally(() => {
      running = undefined;
      schedule(intervalMs - (Date.now() - started));
    });
  };
  schedule(random() * intervalMs);
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
