/**
 * A claim without a waiting line: the first free device that matches, retained at once, or a refusal that says
 * whether no device matches or all matching ones are busy. Stands until the shared waiting line is wired in.
 */
import { ApiFailure } from '@devicelab/shared';
import type { Db } from '../../store/database';
import type { TicketKeys } from '../device-ticket';
import { retainDevice } from '../device-actions';
import type { GatewayDirectory } from '../../gateways/gateway-directory';
import { claimedDevice, type AutomationDeviceFilter, type ClaimDevice } from './device-claim';

function versionHasPrefix(version: string, prefix: string): boolean {
  const parts = version.split('.');
  return prefix.split('.').every((part, i) => parts[i] !== undefined && Number.parseInt(parts[i], 10) === Number.parseInt(part, 10));
}

export function immediateClaim(db: Db, ticketKeys: TicketKeys, gateways: GatewayDirectory, clock: () => Date): ClaimDevice {
  return async (user, filter: AutomationDeviceFilter) => {
    const rows = await db.selectFrom('devices').selectAll().where('deleted', '=', false).orderBy('name').execute();
    const has = (field: string | null, text: string) => (field ?? '').toLowerCase().includes(text.toLowerCase());
    const matching = rows.filter((d) => (!filter.os || d.operating_system === filter.os)
      && (!filter.osVersion || versionHasPrefix(d.operating_system_version ?? '', filter.osVersion))
      && (!filter.model || has(d.model, filter.model) || has(d.friendly_model, filter.model))
      && (!filter.name || has(d.name, filter.name))
      && (!filter.id || [d.id, d.serial_number, d.vendor_unique_identifier].some((v) => v?.toLowerCase() === filter.id!.toLowerCase()))
      && (!filter.formFactor || (d.form_factor ?? '').toLowerCase() === filter.formFactor.toLowerCase()));
    for (const device of matching) {
      if (device.retained_by || device.availability !== 'Online' || !device.enabled) continue;
      try {
        await retainDevice(db, user, device.id, { ticketKeys, gateways, now: clock });
        return await claimedDevice(db, device.id);
      } catch (err) {
        if (!(err instanceof ApiFailure) || err.code === 'ENTITLEMENT_REQUIRED') throw err;
      }
    }
    const which = filter.text ? ` '${filter.text}'` : '';
    throw new ApiFailure(matching.length === 0 ? `No device of the lab matches${which}.`
      : `All ${matching.length} device(s) matching${which} are busy: ${matching.map((d) => d.name).join(', ')}.`, 'DEVICE_IN_USE');
  };
}
