/**
 * The lab's lease settings (`/Settings`, kept in `hub_settings`; the database's lease routines read the same keys:
 * store/routines/device-lease.ts): how long a retain may stay idle before it is released, the longest idle time a
 * retain may ask for, and the longest a lease may last (roles may carry their own: `roles.max_lease_minutes`).
 */
import { ApiFailure } from '@devicelab/shared';
import type { Db, Tx } from '../store/database';

export interface LeaseSettings {
  /** A retain unused this long is released; 0: never. Default 30. */
  retainIdleMinutes: number;
  /** The longest idle time a retain may ask for (`idleMinutes=`); 0: any, including never. Default 240. */
  retainIdleMaxMinutes: number;
  /** The longest a lease may last before renewal; 0: no maximum. Default 0. */
  leaseMaxMinutes: number;
}

export const LEASE_SETTING_KEYS: Record<keyof LeaseSettings, { key: string; fallback: number }> = {
  retainIdleMinutes: { key: 'lease.idleMinutes', fallback: 30 },
  retainIdleMaxMinutes: { key: 'lease.maxIdleMinutes', fallback: 240 },
  leaseMaxMinutes: { key: 'lease.maxLeaseMinutes', fallback: 0 },
};
export const LEASE_SETTINGS = Object.keys(LEASE_SETTING_KEYS) as (keyof LeaseSettings)[];

/** The largest minutes value any lease setting takes (about a year). */
export const MAX_LEASE_SETTING_MINUTES = 525_600;

export async function readLeaseSettings(db: Db | Tx): Promise<LeaseSettings> {
  const rows = await db.selectFrom('hub_settings').select(['key', 'value'])
    .where('key', 'in', LEASE_SETTINGS.map((name) => LEASE_SETTING_KEYS[name].key)).execute();
  const stored = new Map(rows.map((r) => [r.key, r.value]));
  const read = (name: keyof LeaseSettings) => {
    const value = Number(stored.get(LEASE_SETTING_KEYS[name].key));
    return Number.isInteger(value) && value >= 0 ? value : LEASE_SETTING_KEYS[name].fallback;
  };
  return { retainIdleMinutes: read('retainIdleMinutes'), retainIdleMaxMinutes: read('retainIdleMaxMinutes'),
    leaseMaxMinutes: read('leaseMaxMinutes') };
}

/** Refuses an `idleMinutes=` the lab does not allow: above its maximum, or never (0) while there is one. */
export async function assertIdleMinutesAllowed(db: Db, idleMinutes: number | undefined): Promise<void> {
  if (idleMinutes === undefined) return;
  if (idleMinutes < 0) throw new ApiFailure(`Parameter 'idleMinutes' cannot be negative.`, 'INVALID_PARAMETER', 'idleMinutes');
  const { retainIdleMaxMinutes: max } = await readLeaseSettings(db);
  if (max > 0 && (idleMinutes === 0 || idleMinutes > max)) {
    throw new ApiFailure(`Parameter 'idleMinutes' must be between 1 and ${max} (the lab's retainIdleMaxMinutes).`,
      'INVALID_PARAMETER', 'idleMinutes');
  }
}
