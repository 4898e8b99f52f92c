/**
 * Why a device is about to go Offline or come back Online when the hub made it so (a user switched its USB port,
 * or rebooted it): kept until the flip it explains is recorded, so that the flip's DeviceAvailability event (and
 * its webhook) names who and why, and an Offline device's readinessReason says which it was. A cause no flip
 * claims in time expires; a command that failed takes its cause back.
 */
import type { UsbHubPortState } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import type { Db, Tx } from '../store/database';

export type ExpectedAvailability = 'Online' | 'Offline';

export interface AvailabilityCause {
  expected: ExpectedAvailability;
  /** What happened and who did it, e.g. `USB port switched Off by alice`. */
  reason: string;
  by: AuthenticatedUser;
  /** How long the flip may take to come. */
  withinMs: number;
}

/** A port switch shows on the device within seconds; a reboot can take minutes. */
const PORT_SWITCH_WITHIN_MS = 2 * 60_000;
const REBOOT_WITHIN_MS = 10 * 60_000;

export function portSwitchCause(state: Exclude<UsbHubPortState, 'Unknown'>, by: AuthenticatedUser): AvailabilityCause {
  const switched = state === 'Off' ? 'switched Off' : state === 'Charge' ? 'switched to Charge (no data)' : `switched to ${state}`;
  return {
    expected: state === 'Off' || state === 'Charge' ? 'Offline' : 'Online',
    reason: `USB port ${switched} by ${by.displayName}`, by, withinMs: PORT_SWITCH_WITHIN_MS,
  };
}

export function rebootCause(by: AuthenticatedUser): AvailabilityCause {
  return { expected: 'Online', reason: `Rebooted by ${by.displayName}`, by, withinMs: REBOOT_WITHIN_MS };
}

export async function expectAvailability(db: Db | Tx, deviceIds: string[], cause: AvailabilityCause): Promise<void> {
  if (deviceIds.length === 0) return;
  const row = {
    expected: cause.expected, reason: cause.reason, performed_by_id: cause.by.id, performed_by_name: cause.by.displayName,
    expires_at: new Date(Date.now() + cause.withinMs),
  };
  await db.insertInto('availability_causes').values(deviceIds.map((device_id) => ({ device_id, ...row })))
    .onConflict((oc) => oc.column('device_id').doUpdateSet(row)).execute();
}

/** The command did not happen: its causes go (a later unplug is not the user's doing). */
export async function withdrawCauses(db: Db | Tx, deviceIds: string[], cause: AvailabilityCause): Promise<void> {
  if (deviceIds.length === 0) return;
  await db.deleteFrom('availability_causes').where('device_id', 'in', deviceIds).where('reason', '=', cause.reason).execute();
}

/** Takes the causes of these devices' flips to `availability` (expired ones of these devices go too). */
export async function claimCauses(trx: Tx, deviceIds: string[], availability: ExpectedAvailability) {
  if (deviceIds.length === 0) return new Map<string, { reason: string; performed_by_id: string | null; performed_by_name: string | null }>();
  const now = new Date();
  const rows = await trx.deleteFrom('availability_causes').where('device_id', 'in', deviceIds)
    .where((eb) => eb.or([eb('expected', '=', availability), eb('expires_at', '<=', now)]))
    .returning(['device_id', 'expected', 'reason', 'performed_by_id', 'performed_by_name', 'expires_at']).execute();
  return new Map(rows.filter((row) => row.expected === availability && row.expires_at > now).map((row) => [row.device_id, row]));
}
