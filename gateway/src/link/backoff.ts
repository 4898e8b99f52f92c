/** Exponential reconnect backoff with "equal jitter": delay in [base/2, base], base = min(max, initial * 2^n). */
export interface BackoffOptions { initialMs: number; maxMs: number }

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 250, maxMs: 10_000 };

export class Backoff {
  private attempt = 0;

  constructor(private readonly options: BackoffOptions = DEFAULT_BACKOFF, private readonly random = Math.random) {}

  next(): number {
    const base = Math.min(this.options.maxMs, this.options.initialMs * 2 ** this.attempt);
    if (base < this.options.maxMs) this.attempt++;
    return Math.round(base / 2 + (base / 2) * this.random());
  }

  reset(): void {
    this.attempt = 0;
  }
}
