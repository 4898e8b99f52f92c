/**
 * Says yes to a key at most once per interval: for events a client can cause again and again (a refused connection
 * retried every second), so that the history records each cause without being flooded. Remembers at most `maxKeys`
 * keys, the least recently told first to go, so whoever sends new keys cannot grow it either.
 */
export class OncePerInterval {
  /** key -> when it was last said yes to; Map order is that order, oldest first. */
  private readonly told = new Map<string, number>();

  constructor(private readonly intervalMs: number, private readonly maxKeys = 1_000, private readonly now: () => number = Date.now) {}

  /** True when `key` was not said yes to within the interval (and from now on it counts as told). */
  first(key: string): boolean {
    const now = this.now();
    const last = this.told.get(key);
    if (last !== undefined && now - last < this.intervalMs) return false;
    this.told.delete(key);
    this.told.set(key, now);
    for (const [old, at] of this.told) {
      if (this.told.size <= this.maxKeys && now - at < this.intervalMs) break;
      this.told.delete(old);
    }
    return true;
  }
}
