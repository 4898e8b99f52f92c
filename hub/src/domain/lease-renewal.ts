/**
 * `POST /Device?action=renew` (extension): the holder extends the lease before it ends, up to their maximum lease
 * length (the lab's `leaseMaxMinutes` or their roles' own; the database's `lease_max_minutes`). A renewal is use of
 * the device too (its idle time starts again) and withdraws a warning given.
 */
import { sql } from 'kysely';
import { ApiFailure, formatWireDate } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { requireEntitlement } from '../auth/entitlements';
import type { Db } from '../store/database';
import { readDeferred, type Deferred } from './deferred-input';
import { resolveDevice } from './device-queries';

export interface LeaseTerms {
  /** When the lease ends now; absent: no maximum applies. */
  leaseEndTime?: string;
}

export async function renewLease(
  db: Db, user: AuthenticatedUser, identifier: string, options: { minutes?: Deferred<number | undefined>; now?: () => Date },
): Promise<LeaseTerms> {
  requireEntitlement(user, 'DeviceConnect');
  const minutes = readDeferred(options.minutes ?? undefined);
  const device = await resolveDevice(db, identifier);
  if (device.retained_by !== user.id || !device.retain_id) {
    throw new ApiFailure(`You do not retain device '${device.name}'; a lease ended is not renewed: retain it again.`, 'DEVICE_NOT_RETAINED');
  }
  const { rows: [limit] } = await sql<{ minutes: number | null }>`SELECT lease_max_minutes(${user.id}::uuid) AS minutes`.execute(db);
  const max = limit?.minutes ?? null;
  if (minutes !== undefined && (minutes < 1 || (max !== null && minutes > max))) {
    throw new ApiFailure(max === null ? `Parameter 'minutes' must be at least 1.`
      : `A lease of device '${device.name}' may last at most ${max} minutes from now; ask for 1 to ${max}.`, 'LEASE_LIMIT', 'minutes');
  }
  const at = options.now?.() ?? new Date();
  const length = minutes ?? max;
  const endsAt = length === null ? null : new Date(at.getTime() + length * 60_000);
  const updated = await db.updateTable('device_leases')
    .set({ ends_at: endsAt, last_used_at: sql`greatest(last_used_at, ${at.toISOString()}::timestamptz)`, warned_at: null })
    .where('device_id', '=', device.id).where('retain_id', '=', device.retain_id).returning('device_id').executeTakeFirst();
  if (!updated) {
    // Retained before leases were recorded: this renewal's terms become its lease.
    await db.insertInto('device_leases').values({
      device_id: device.id, retain_id: device.retain_id, user_id: user.id, started_at: at, last_used_at: at, ends_at: endsAt,
    }).onConflict((oc) => oc.column('device_id').doUpdateSet({ retain_id: device.retain_id!, ends_at: endsAt, last_used_at: at, warned_at: null }))
      .execute();
  }
  return endsAt ? { leaseEndTime: formatWireDate(endsAt) } : {};
}
