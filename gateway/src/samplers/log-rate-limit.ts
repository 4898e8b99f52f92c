/**
 * Token bucket for device log lines: `perSecond` on average, bursts up to `2 * perSecond`. Lines over the
 * bound are counted, and the count is handed out once per second so the `log` table says how many are missing.
 */
export class LogRateLimit {
  private tokens: number;
  private last: number;
  private droppedSinceNote = 0;
  private lastNoteAt: number;
  /** Lines dropped since this limit was created. */
  dropped = 0;

  constructor(private readonly perSecond: number, private readonly now: () => number = Date.now) {
    this.tokens = 2 * perSecond;
    this.last = now();
    this.lastNoteAt = this.last;
  }

  /** True when this line may pass. */
  take(): boolean {
    const t = this.now();
    this.tokens = Math.min(2 * this.perSecond, this.tokens + ((t - this.last) / 1000) * this.perSecond);
    this.last = t;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    this.dropped++;
    this.droppedSinceNote++;
    return false;
  }

  /** Lines dropped since the last note, at most once per second (0: nothing to say yet). */
  takeDroppedNote(): number {
    const t = this.now();
    if (this.droppedSinceNote === 0 || t - this.lastNoteAt < 1000) return 0;
    const n = this.droppedSinceNote;
    this.droppedSinceNote = 0;
    this.lastNoteAt = t;
    return n;
  }
}
