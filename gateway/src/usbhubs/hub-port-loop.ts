/**
 * The loop battery care, recovery and telemetry run in: one pass over every hub port on an interval. Passes
 * never overlap; `check()` runs one now (or joins the running one), and `stop()` waits for it to finish so no
 * port is switched or sampled after the gateway stopped.
 */
import type { Logger } from '@devicelab/shared';

export abstract class HubPortLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  protected constructor(
    private readonly intervalMs: number,
    protected readonly logger: Logger,
    /** Names the loop in the log line of a failed pass. */
    private readonly purpose: string,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.check(), this.intervalMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  check(): Promise<void> {
    this.running ??= this.pass().catch((err: unknown) => {
      this.logger.warn({ err }, `${this.purpose} pass failed`);
    }).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  protected abstract pass(): Promise<void>;
}
