/**
 * The waiting line's engine on one hub replica. Every replica serves the whole line (rows in `device_waiters`,
 * migration 034) whenever something may have freed a device: a device change heard on the change feed (a release,
 * a device coming Online or enabled, a booking changed), a new waiter, and a slow safety tick (a booking that ended
 * changes no row). Serving runs under one advisory lock across replicas, in one transaction: the free devices are
 * read, each goes to the earliest waiter whose filter it matches and who may retain it (not booked by someone
 * else), retained for that waiter by the database's `retain_device` in that same transaction. No device is ever
 * assigned twice: it is retained before the transaction commits and the next serve sees it taken.
 * A replica serves only while requests of its own wait (the replica holding a waiter always hears the change),
 * and the leader also cleans up after replicas that died: their rows go, a device assigned to them is released.
 */
import { sql } from 'kysely';
import { isFreeDevice, matchesDeviceFilter, parseDeviceFilter, type Logger } from '@devicelab/shared';
import type { ChangeFeed } from '../events/change-feed';
import { LockKind } from '../fleet/advisory-locks';
import { liveReplicas } from '../fleet/replica-registry';
import { withTx, type Db, type Tx } from '../store/database';
import type { DeviceWaitersTable } from '../store/schema';
import type { Selectable } from 'kysely';
import { toDeviceModel } from './device-mapping';
import { bookerAt, selectDevices } from './device-queries';
import { releaseForLease, type ReleaseOptions } from './device-actions';

/** The slow re-check: bookings that ended, waiters of replicas that died. Never the way a release is heard. */
export const LINE_SAFETY_TICK_MS = 2_000;

type WaiterRow = Selectable<DeviceWaitersTable>;

/**
 * The sender the line's retains are announced as on the replicas' relay channel: no replica's id, so every replica,
 * this one too, tells its own gateways at commit and the device's endpoint opens while the waiter is answered.
 */
const LINE_RELAY_FROM = 'waiting-line';

interface LocalWaiter {
  assigned(deviceId: string): void;
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
  /** Devices this replica's passes retained whose change notice has not come yet (bounded: see assign). */
  private readonly ownRetains = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private stopped = false;

  constructor(private readonly db: Db, private readonly options: LineServerOptions) {}

  /**
   * On every device change the feed brings the leader serves the line (one server: no pass of one replica waits on
   * another's lock for nothing) and the other replicas look whether a device was assigned to their waiters; a
   * request joining serves at once wherever it joins; a slow tick serves from every replica with waiters (a booking
   * that ended changes no row; a leader that died serves no more).
   */
  start(feed: Pick<ChangeFeed, 'subscribe'>): void {
    this.unsubscribe = feed.subscribe((change) => {
      if (change.kind !== 'device') return;
      // The change a retain of this replica's pass made frees nothing: its waiter is handed the device, no more.
      const own = this.ownRetains.get(change.objectId) ?? 0;
      if (own > 0) {
        if (own === 1) this.ownRetains.delete(change.objectId);
        else this.ownRetains.set(change.objectId, own - 1);
      }
      if (this.options.isLeader() && own === 0) this.serveSoon();
      else if (this.local.size > 0) this.serveSoon('handOver');
    });
    this.timer = setInterval(() => {
      if (this.local.size > 0 || this.options.isLeader()) this.serveSoon('tick');
    }, LINE_SAFETY_TICK_MS);
    this.timer.unref();
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
          // A device another replica assigned to a waiter here is handed over before this replica's own pass.
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
    const waiting = await this.db.selectFrom('device_waiters').select('id').where('assigned_device', 'is', null).limit(1).executeTakeFirst();
    if (!waiting) return false;
    const retained: string[] = [];
    const expect = (id: string, by: number) => {
      const count = (this.ownRetains.get(id) ?? 0) + by;
      if (count > 0) this.ownRetains.set(id, count);
      else this.ownRetains.delete(id);
    };
    if (this.ownRetains.size > 10_000) this.ownRetains.clear(); // notices lost (feed reconnect): serve on each again
    await withTx(this.db, async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${sql.lit(LockKind.waitingLine)}, 0)`.execute(trx);
      const waiters = await trx.selectFrom('device_waiters').selectAll().where('assigned_device', 'is', null)
        .orderBy('place').execute();
      if (waiters.length === 0) return;
      const free = await freeDevices(trx, waiters, this.options.now());
      // Dated after the free devices were read, so never before the release that freed one (the history's order).
      const at = this.options.now();
      const taken = new Set<string>();
      for (const waiter of waiters) {
        if (taken.size === free.length) break;
        const filter = waiter.device_id ? undefined : parseDeviceFilter(waiter.filter);
        const pick = free.find((d) => !taken.has(d.id) && (!d.booker || d.booker === waiter.user_id)
          && (filter ? matchesDeviceFilter(filter, d.model) : d.id === waiter.device_id));
        if (!pick) continue;
        taken.add(pick.id);
        // The waiter hears of it after commit (handOver), from its row, like a waiter of another replica.
        if (await this.retainFor(trx, waiter, pick.id, at)) {
          // Expected before the commit, whose notice may come before this function goes on.
          retained.push(pick.id);
          expect(pick.id, 1);
        }
      }
    }).catch((err: unknown) => {
      for (const id of retained) expect(id, -1);
      throw err;
    });
    return retained.length > 0;
  }

  /** Assigns the device to the waiter and retains it for them; false when either moved on meanwhile. */
  private async retainFor(trx: Tx, waiter: WaiterRow, deviceId: string, at: Date): Promise<boolean> {
    // The row first: a request leaving at this moment either deleted it already (nothing assigned) or waits for
    // this transaction and then finds the device it must release.
    const claimed = await trx.updateTable('device_waiters').set({ assigned_device: deviceId, assigned_at: at })
      .where('id', '=', waiter.id).where('assigned_device', 'is', null).returning('id').executeTakeFirst();
    if (!claimed) return false;
    const { rows: [outcome] } = await sql<{ outcome: string }>`SELECT outcome FROM retain_lease(${deviceId}::text,
      ${deviceId}::uuid, ${waiter.user_id}::uuid, ${waiter.user_name}, ${at.toISOString()}::timestamptz,
      ${LINE_RELAY_FROM}::text, ${waiter.lease_name}::text, ${waiter.idle_minutes}::int)`.execute(trx);
    if (outcome?.outcome === 'retained') {
      // The retain's event, written by retain_lease in this transaction, says who the device went to: a test run's
      // WebDriver session is marked so (the history and usage records show it).
      if (waiter.purpose === 'automation') {
        await sql`UPDATE events SET automation_session = true WHERE id = (SELECT id FROM events WHERE device_id = ${deviceId}::uuid
          AND event_type = 'DeviceRetained' AND bool_value ORDER BY seq DESC LIMIT 1)`.execute(trx);
      }
      return true;
    }
    await trx.updateTable('device_waiters').set({ assigned_device: null, assigned_at: null }).where('id', '=', waiter.id).execute();
    return false;
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

interface FreeDevice {
  id: string;
  booker: string | null;
  model: ReturnType<typeof toDeviceModel>;
}

/** Devices a retain could get now, fullest battery first, then by name. */
async function freeDevices(trx: Tx, waiters: WaiterRow[], at: Date): Promise<FreeDevice[]> {
  const needApps = waiters.some((w) => /(^|,)\s*(app|bundle)\s*=/i.test(w.filter));
  const rows = await selectDevices(trx, { properties: false, installedPackages: needApps })
    .where('devices.deleted', '=', false).where('devices.enabled', '=', true)
    .where('devices.availability', '=', 'Online').where('devices.retained_by', 'is', null).execute();
  return rows.map((row) => ({ id: row.id, booker: bookerAt(row, at), model: toDeviceModel(row, { allApplications: needApps }) }))
    .filter((d) => isFreeDevice(d.model))
    .sort((a, b) => (b.model.batteryPercentCharged ?? 0) - (a.model.batteryPercentCharged ?? 0)
      || (a.model.name ?? '').localeCompare(b.model.name ?? ''));
}
