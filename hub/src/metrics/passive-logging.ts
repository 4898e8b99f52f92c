/**
 * Passive metrics logging per device (spec 4.3 `action=enabled`, on by default): the persisted switch, and the
 * list of switched-off devices that every gateway gets in MetricsSettings (it stops sampling them; the hub
 * also drops rows of those devices that were already on their way).
 */
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { resolveDevice } from '../domain/device-queries';
import { requireEntitlement } from '../auth/entitlements';
import { withTx, type Db } from '../store/database';

/** Passive logging on or off (spec 4.3 action=enabled). Returns whether the device's setting changed. */
export async function setMetricsEnabled(db: Db, user: AuthenticatedUser, identifier: string, enable: boolean): Promise<boolean> {
  requireEntitlement(user, 'DeviceList');
  requireEntitlement(user, 'DeviceModify');
  const device = await resolveDevice(db, identifier);
  return withTx(db, async (trx) => {
    const result = await trx.updateTable('devices').set({ metrics_enabled: enable })
      .where('id', '=', device.id).where('metrics_enabled', '=', !enable).executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  });
}

/** Vendor unique identifiers of the devices whose passive logging is off (MetricsSettings). */
export async function metricsDisabledDevices(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('devices').select('vendor_unique_identifier')
    .where('metrics_enabled', '=', false).orderBy('vendor_unique_identifier').execute();
  return rows.map((row) => row.vendor_unique_identifier);
}
