/**
 * Follows `host:track-devices` through adbkit and reports raw adb states per serial. When the tracking
 * connection ends (adb server restarted or killed) it re-tracks with backoff (adbkit starts the server again
 * on a refused connection) and reconciles: serials missing from the new list are reported removed.
 * adb 29 does not send every transition over track-devices (a dropped TCP device stays silent, `unauthorized`
 * after `offline` may never be pushed), so a `host:devices` poll reconciles the same state periodically.
 */
import type { Client, Device } from '@devicefarmer/adbkit';
import type { Logger } from '@devicelab/shared';

export interface AdbTrackerEvents {
  /** The serial is listed with this adb state (`device`, `offline`, `unauthorized`, ...). May repeat. */
  state(serial: string, adbState: string): void;
  removed(serial: string): void;
}

type AdbTracking = Awaited<ReturnType<Client['trackDevices']>>;

export class AdbTracker {
  private readonly known = new Map<string, string>();
  private tracking: AdbTracking | undefined;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs: number;
  private pollTimer: NodeJS.Timeout | undefined;
  /** Bumped on every tracker update so a poll that raced with one is discarded. */
  private trackSeq = 0;

  constructor(
    private readonly client: Client,
    private readonly events: AdbTrackerEvents,
    private readonly logger: Logger,
    private readonly retry: { minMs: number; maxMs: number; pollMs?: number } = { minMs: 250, maxMs: 5_000, pollMs: 2_000 },
  ) {
    this.retryMs = retry.minMs;
  }

  /** Resolves after the first tracking attempt (on failure it keeps retrying in the background). */
  async start(): Promise<void> {
    await this.track();
    if (this.retry.pollMs) this.schedulePoll(this.retry.pollMs);
  }

  stop(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.tracking?.end();
    this.tracking = undefined;
  }

  private async track(): Promise<void> {
    if (this.stopped) return;
    let tracking: AdbTracking;
    try {
      tracking = await this.client.trackDevices();
    } catch (err) {
      this.logger.warn({ err: String(err) }, 'adb device tracking failed; retrying');
      this.scheduleRetry();
      return;
    }
    if (this.stopped) {
      tracking.end();
      return;
    }
    this.tracking = tracking;
    let first = true;
    tracking.on('changeSet', (changes: { added: Device[]; changed: Device[]; removed: Device[] }) => {
      this.trackSeq++;
      if (first) {
        first = false;
        this.retryMs = this.retry.minMs;
        const present = new Set(changes.added.map((d) => d.id));
        for (const serial of [...this.known.keys()]) if (!present.has(serial)) this.remove(serial);
      }
      for (const d of changes.removed) this.remove(d.id);
      for (const d of [...changes.added, ...changes.changed]) {
        this.known.set(d.id, d.type);
        this.events.state(d.id, d.type);
      }
    });
    let ended = false;
    const onEnd = (err?: unknown) => {
      if (ended) return;
      ended = true;
      if (this.tracking === tracking) this.tracking = undefined;
      if (this.stopped) return;
      this.logger.warn({ err: err === undefined ? undefined : String(err) }, 'adb device tracking ended; re-tracking');
      this.scheduleRetry();
    };
    tracking.on('error', onEnd);
    tracking.on('end', () => onEnd());
  }

  private schedulePoll(pollMs: number): void {
    if (this.stopped) return;
    this.pollTimer = setTimeout(() => {
      void this.poll().finally(() => this.schedulePoll(pollMs));
    }, pollMs);
  }

  private async poll(): Promise<void> {
    if (!this.tracking) return; // not tracking: the next re-track reconciles anyway
    const seq = this.trackSeq;
    let list: Device[];
    try {
      list = await this.client.listDevices();
    } catch {
      return;
    }
    if (this.stopped || seq !== this.trackSeq || !this.tracking) return;
    const present = new Map(list.map((d) => [d.id, d.type as string]));
    for (const serial of [...this.known.keys()]) if (!present.has(serial)) this.remove(serial);
    for (const [serial, type] of present) {
      if (this.known.get(serial) === type) continue;
      this.known.set(serial, type);
      this.events.state(serial, type);
    }
  }

  private remove(serial: string): void {
    if (!this.known.delete(serial)) return;
    this.events.removed(serial);
  }

  private scheduleRetry(): void {
    if (this.stopped || this.retryTimer) return;
    const delay = this.retryMs;
    this.retryMs = Math.min(this.retry.maxMs, this.retryMs * 2);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.track();
    }, delay);
  }
}
