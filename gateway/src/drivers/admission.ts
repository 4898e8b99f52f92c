/**
 * Admission control for device work: at most `perDevice` operations per device and `total` per gateway run at
 * once; the rest wait in arrival order. A gateway started with hundreds of devices plugged would otherwise open
 * hundreds of adb streams at once, time them all out and retry them all, and never get anywhere.
 *
 * A slot is held until the operation has really finished on the wire (see `runShell`: a command that timed out
 * for its caller keeps its slot until its stream is closed), so the bound holds for what adb is actually doing.
 */
export interface AdmissionLimits {
  perDevice: number;
  total: number;
}

interface Waiter {
  key: string;
  start: () => void;
}

export class Admission {
  private running = 0;
  private readonly runningPerKey = new Map<string, number>();
  private readonly waiting: Waiter[] = [];

  constructor(readonly limits: AdmissionLimits) {}

  /** Operations running now (for tests and diagnostics). */
  get active(): number {
    return this.running;
  }

  /** Operations waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Waits for a slot for `key`; the returned function gives it back (call it exactly once). */
  acquire(key: string): Promise<() => void> {
    return new Promise((resolve) => {
      const start = () => {
        this.running++;
        this.runningPerKey.set(key, (this.runningPerKey.get(key) ?? 0) + 1);
        let released = false;
        resolve(() => {
          if (released) return;
          released = true;
          this.running--;
          const left = (this.runningPerKey.get(key) ?? 1) - 1;
          if (left > 0) this.runningPerKey.set(key, left);
          else this.runningPerKey.delete(key);
          this.admitWaiting();
        });
      };
      if (this.admits(key)) start();
      else this.waiting.push({ key, start });
    });
  }

  /** Runs `work` in a slot for `key`. */
  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const release = await this.acquire(key);
    try {
      return await work();
    } finally {
      release();
    }
  }

  private admits(key: string): boolean {
    return this.running < this.limits.total && (this.runningPerKey.get(key) ?? 0) < this.limits.perDevice;
  }

  /** The oldest waiters whose device has room go first; one device's backlog does not block the others. */
  private admitWaiting(): void {
    for (let i = 0; i < this.waiting.length && this.running < this.limits.total;) {
      const waiter = this.waiting[i];
      if (this.admits(waiter.key)) {
        this.waiting.splice(i, 1);
        waiter.start();
      } else {
        i++;
      }
    }
  }
}
