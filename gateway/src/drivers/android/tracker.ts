/**
 * Follows `host:track-devices` through adbkit and reports raw adb states per serial. When the tracking
 * connection ends (adb server restarted or killed) it re-tracks with backoff (adbkit starts the server again
 * on a refused connection) and reconciles: serials missing from the new list are reported removed.
 * adb 29 does not send every transition over track-devices (a dropped TCP device stays silent, `unauthorized`
 * after `offline` may never be pushed), so a `host:devices` poll reconciles the same state periodically.
 */
import type { Client, Device } from '@devicefarmer/adbkit';
import type { Logger } from '@devicelab/shared';

interface AdbTrackerEvents {
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
      this.logger.warn({ err }, 'adb device tracking failed; retrying');
      this.scheduleRetry();
      return;
    }
    if (this.stopped) {
      tracking.end();
      return;
    }
    this.tracking = tracking;
    tracking.on('changeSet', (changes: { added: Device[]; changed: Device[]; removed: Device[] }) => {
      this.trackSeq++;
      this.retryMs = this.retry.minMs;
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
      this.logger.warn({ err }, 'adb device tracking ended; re-tracking');
      this.scheduleRetry();
    };
    tracking.on('error', onEnd);
    tracking.on('end', () => onEnd());
    // adbkit's tracker starts reading as soon as it exists, so its first changeSet (the full list) may have been
    // emitted before the listener above was attached; a later changeSet then only carries a diff. So the full
    // list comes from `host:devices` instead: it reports what is there and drops what a restarted adb server no
    // longer knows. A changeSet landing meanwhile makes the answer stale: ask again.
    for (let attempt = 0; attempt < 5 && !(await this.reconcile()); attempt++);
  }

  private schedulePoll(pollMs: number): void {
    if (this.stopped) return;
    this.pollTimer = setTimeout(() => {
      void this.poll().finally(() => this.schedulePoll(pollMs));
    }, pollMs);
  }

  private async poll(): Promise<void> {
    await this.reconcile();
  }

  /**
   * Brings `known` in line with `host:devices`. False when not tracking (the next re-track reconciles anyway),
   * when adb did not answer, or when a tracker update raced with the list (it may be newer than the list).
   */
  private async reconcile(): Promise<boolean> {
    if (!this.tracking) return false;
    const seq = this.trackSeq;
    let list: Device[];
    try {
      list = await this.client.listDevices();
    } catch {
      return false;
    }
    if (this.stopped || seq !== this.trackSeq || !this.tracking) return false;
    const present = new Map(list.map((d) => [d.id, d.type as string]));
    for (const serial of [...this.known.keys()]) if (!present.has(serial)) this.remove(serial);
    for (const [serial, type] of present) {
      if (this.known.get(serial) === type) continue;
      this.known.set(serial, type);
      this.events.state(serial, type);
    }
    return true;
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
