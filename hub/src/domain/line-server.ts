/**
 * The waiting line's engine on one hub replica. The line is rows in `device_waiters` (migrations 034, 039) and
 * the database serves it (store/routines/waiting-line.ts): every release hands its device to the earliest waiter it
 * suits in the release's own transaction, and a pass over the whole line (`serve_waiting_line`, one statement under
 * one advisory lock across replicas) serves what frees a device without a release: a device coming Online or
 * enabled, a booking that ended (a slow tick: it changes no row), a request joining. No device is ever assigned
 * twice: it is retained in the transaction that assigns it, and every later one sees it taken.
 * A waiter's replica hears of its device at commit on the relay channel (`lineHandOver`) and answers at once; a
 * device change from the change feed also makes it look at its rows, should a notice be lost (a reconnect).
 * The leader also cleans up after replicas that died: their rows go, a device assigned to them is released.
 */
import { sql } from 'kysely';
import type { Logger } from '@devicelab/shared';
import type { ChangeFeed } from '../events/change-feed';
import { liveReplicas } from '../fleet/replica-registry';
import type { Db } from '../store/database';
import { releaseForLease, type ReleaseOptions, type RetainOutcome } from './device-actions';

/** The slow re-check: bookings that ended, waiters of replicas that died. Never the way a release is heard. */
export const LINE_SAFETY_TICK_MS = 2_000;

/**
 * The sender the line's retains are announced as on the replicas' relay channel: no replica's id, so every replica,
 * this one too, tells its own gateways at commit and the device's endpoint opens while the waiter is answered.
 */
const LINE_RELAY_FROM = 'waiting-line';

/** A device retained for a waiter; `retain`: the retain's outcome when its notice carried it. */
export interface Turn {
  deviceId: string;
  retain?: RetainOutcome;
}

interface LocalWaiter {
  assigned(deviceId: string, retain?: RetainOutcome): void;
}

/** The relay channel's notice that a device was retained for a waiter (sent by `line_retain_for`). */
interface HandOverNotice {
  type: 'lineHandOver';
  to: string;
  waiter: string;
  device: string;
  /** The retain's outcome without the adb keys; dates as JSON text. */
  retain?: Omit<RetainOutcome, 'retained_at'> & { retained_at: string | null };
}

export interface LineServerOptions {
  replicaId: () => string;
  isLeader: () => boolean;
  now: () => Date;
  logger: Logger;
  gateways?: ReleaseOptions['gateways'];
}

export class LineServer {
  private readonly local = new Map<string, LocalWaiter>();
  private running: Promise<void> | undefined;
  private again = false;
  private wantAssign = false;
  private wantCleanup = false;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private stopped = false;

  constructor(private readonly db: Db, private readonly options: LineServerOptions) {}

  /**
   * On every device change the feed brings the leader serves the line (one server: no pass of one replica waits on
   * another's lock for nothing; a pass that finds no free device costs one short statement) and the other replicas
   * with waiters look at their rows; a request joining serves at once wherever it joins; a slow tick serves from
   * every replica with waiters (a booking that ended changes no row; a leader that died serves no more).
   */
  start(feed: Pick<ChangeFeed, 'subscribe'>): void {
    this.unsubscribe = feed.subscribe((change) => {
      if (change.kind !== 'device') return;
      if (this.options.isLeader()) this.serveSoon();
      else if (this.local.size > 0) this.serveSoon('handOver');
    });
    this.timer = setInterval(() => {
      if (this.local.size > 0 || this.options.isLeader()) this.serveSoon('tick');
    }, LINE_SAFETY_TICK_MS);
    this.timer.unref();
  }

  /** A payload on the replicas' relay channel: a device retained for one of this replica's waiters is its answer. */
  heard(payload: string): void {
    if (!payload.includes('"lineHandOver"')) return;
    let notice: HandOverNotice;
    try {
      notice = JSON.parse(payload) as HandOverNotice;
    } catch {
      return;
    }
    if (notice.type !== 'lineHandOver' || notice.to !== this.replicaId) return;
    const retain = notice.retain && { ...notice.retain, retained_at: notice.retain.retained_at ? new Date(notice.retain.retained_at) : null };
    this.local.get(notice.waiter)?.assigned(notice.device, retain);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    clearInterval(this.timer);
    await this.running;
  }

  get replicaId(): string {
    return this.options.replicaId();
  }

  /** A waiter of this replica: `assigned` is called once a device is retained for it. */
  register(waiterId: string, waiter: LocalWaiter): void {
    this.local.set(waiterId, waiter);
  }

  unregister(waiterId: string): void {
    this.local.delete(waiterId);
  }

  /**
   * Serves the line as soon as the current pass ends (passes never overlap within a replica): `serve` assigns free
   * devices and hands over this replica's; `handOver` only the latter; `tick` also cleans up after dead replicas.
   */
  serveSoon(kind: 'serve' | 'handOver' | 'tick' = 'serve'): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (kind !== 'handOver') this.wantAssign = true;
    if (kind === 'tick') this.wantCleanup = true;
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          const [assign, cleanup] = [this.wantAssign, this.wantCleanup];
          this.wantAssign = false;
          this.wantCleanup = false;
          if (cleanup) await this.cleanUpDeadReplicas();
          // A device assigned to a waiter here whose notice did not come is handed over before this replica's pass.
          await this.handOver();
          if (assign && await this.assign()) await this.handOver();
        } while (this.again && !this.stopped);
      } catch (err) {
        this.options.logger.warn({ err }, 'waiting line pass failed; the next change or tick retries');
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  /** One pass over the line; true when it assigned a device. */
  private async assign(): Promise<boolean> {
    const { rows: [pass] } = await sql<{ served: number }>`SELECT serve_waiting_line(
      ${this.options.now().toISOString()}::timestamptz, ${LINE_RELAY_FROM}::text) AS served`.execute(this.db);
    return (pass?.served ?? 0) > 0;
  }

  /** Tells this replica's waiters that have a device now (assigned by any replica). */
  private async handOver(): Promise<void> {
    if (this.local.size === 0) return;
    const rows = await this.db.selectFrom('device_waiters').select(['id', 'assigned_device'])
      .where('replica_id', '=', this.options.replicaId()).where('assigned_device', 'is not', null).execute();
    for (const row of rows) this.local.get(row.id)?.assigned(row.assigned_device!);
  }

  /** Rows of replicas that are gone: deleted, and a device assigned to them (retained, never handed) released. */
  private async cleanUpDeadReplicas(): Promise<void> {
    if (!this.options.isLeader()) return;
    const live = (await liveReplicas(this.db)).map((r) => r.id);
    live.push(this.options.replicaId());
    const gone = await this.db.deleteFrom('device_waiters').where('replica_id', 'not in', live)
      .returning(['assigned_device', 'user_id']).execute();
    for (const row of gone) {
      if (row.assigned_device) {
        await releaseForLease(this.db, row.assigned_device, row.user_id, 'Device Released (its waiting request ended with its hub replica)',
          { now: this.options.now, gateways: this.options.gateways });
      }
    }
  }
}
