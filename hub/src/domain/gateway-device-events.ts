/**
 * Events a gateway reports about one of its devices: what it did to the device's USB port on its own (battery
 * care switches, recovery power-cycles) and connections opened or refused at its access endpoints. Recorded as
 * the Event type the gateway names (Note) on the device, when the device belongs to that gateway; an event for
 * an unknown device is dropped (the result is false).
 */
import type { UsbHubEvent } from '@devicelab/proto';
import { EventType, parseEnumValue } from '@devicelab/shared';
import { withTx, type Db } from '../store/database';
import { recordEvent } from './events';

export async function recordGatewayDeviceEvent(db: Db, gatewayId: string, event: UsbHubEvent): Promise<boolean> {
  const eventType = parseEnumValue(EventType, event.eventType ?? '') ?? 'Note';
  return withTx(db, async (trx) => {
    const device = await trx.selectFrom('devices').select(['id', 'name'])
      .where('vendor_unique_identifier', '=', event.vendorUniqueIdentifier)
      .where('gateway_id', '=', gatewayId)
      .executeTakeFirst();
    if (!device) return false;
    await recordEvent(trx, {
      eventType,
      message: (event.message ?? '').slice(0, 1000),
      deviceId: device.id,
      deviceName: device.name,
      stringValue: event.detail ? event.detail.slice(0, 1000) : null,
      isSuccess: event.isSuccess ?? true,
      ...(event.atMs > 0 ? { eventDate: new Date(event.atMs) } : {}),
    });
    return true;
  });
}
