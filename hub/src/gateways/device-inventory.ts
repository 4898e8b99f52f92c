/**
 * Writes what gateways report about their devices into the records: one short transaction per device (or per
 * batch when a whole gateway goes away), with a DeviceAvailability event in the same transaction as every
 * Online/Offline flip (naming who and why when a user's port switch or reboot caused it: availability-causes.ts). Devices are keyed by vendor unique identifier, so a device keeps its Guid across
 * disconnects and even when it moves to another gateway.
 */
import { thisReplica } from '../fleet/replica';
import { sql } from 'kysely';
import type { DeviceState, UsbHubReport } from '@devicelab/proto';
import { claimCauses } from '../domain/availability-causes';
import { recordEvent } from '../domain/events';
import { licensedDeviceLimit } from '../config';
import { countLicensedDevices, licensedLimitReached, lockLicensedDevices } from '../domain/hub-settings';
import { withTx, type Db, type Tx } from '../store/database';

/** Why a device its gateway stopped reporting is Offline, when no user's port switch says more. */
export const NO_LONGER_REPORTED = 'Unplugged, or its USB connection was lost: the gateway no longer sees it';

/** Set by the domain when it reboots a device; holds until the gateway reports the device Ready again. */
const HUB_REBOOTING = 'Rebooting';

type Availability = 'Online' | 'Offline';

/** What changed for one device. */
interface DeviceChange {
  vendorUniqueIdentifier: string;
  deviceId: string;
  availability: Availability;
  flipped: boolean;
}

const blankToNull = (text: string | undefined): string | null => (text && text.trim() ? text : null);

/**
 * The facts a report actually carries. proto3 cannot tell "unset" from empty, and a gateway that cannot read a
 * device (booting, unauthorized, just unplugged) reports it without facts; so an empty string, a zero port or
 * size, a negative battery and an empty list mean "unknown" and leave the stored value alone rather than
 * erasing what an earlier report said (the serial number in particular, which users search by).
 */
function knownFacts(state: DeviceState) {
  const text = (value: string | undefined) => (value && value.trim() ? value : undefined);
  const positive = (value: number | undefined) => (value !== undefined && value > 0 ? value : undefined);
  const facts = {
    operating_system: text(state.operatingSystem),
    serial_number: text(state.serialNumber),
    model: text(state.model),
    manufacturer: text(state.manufacturer),
    friendly_model: text(state.friendlyModel),
    operating_system_version: text(state.operatingSystemVersion),
    operating_system_build: text(state.operatingSystemBuild),
    product_type: text(state.productType),
    hardware_model: text(state.hardwareModel),
    device_class: text(state.deviceClass),
    form_factor: text(state.formFactor),
    vendor_device_name: text(state.vendorDeviceName),
    mac_address: text(state.macAddress),
    bluetooth_address: text(state.bluetoothAddress),
    usb_location: text(state.usbLocation),
    usb_hub_serial_number: text(state.usbHubSerialNumber),
    usb_hub_port_number: positive(state.usbHubPortNumber),
    battery_percent: state.batteryPercent !== undefined && state.batteryPercent >= 0 ? state.batteryPercent : undefined,
    battery_status: text(state.batteryStatus),
    disk_space: positive(state.diskSpace)?.toString(),
    disk_space_used: positive(state.diskSpaceUsed)?.toString(),
    properties: state.properties?.length ? JSON.stringify(state.properties.map(({ name, value }) => ({ name, value }))) : undefined,
    installed_packages: state.packages?.length
      ? JSON.stringify(state.packages.map(({ identifier, version, buildVersion, system }) => ({ identifier, version, buildVersion, system })))
      : undefined,
  };
  return Object.fromEntries(Object.entries(facts).filter(([, value]) => value !== undefined)) as Partial<typeof facts>;
}

/** Readiness after a report: the hub's Rebooting sticks until the gateway says Ready (SQL: `next_readiness`). */
export function nextReadiness(current: string, reported: string): string {
  if (current === HUB_REBOOTING && reported !== 'Ready') return HUB_REBOOTING;
  return reported || 'Offline';
}

/** SQL: `availability_of` (store/routines/device-state.ts). */
export const availabilityOf = (readiness: string): Availability => (readiness === 'Ready' ? 'Online' : 'Offline');

/**
 * Upserts one reported device and flips its availability when its readiness says so. A known device (the common
 * report: plug, Ready, packages) takes one statement; a new, deleted or re-versioned one the full transaction.
 */
export async function applyDeviceState(db: Db, gatewayId: string, state: DeviceState): Promise<DeviceChange> {
  const reported = knownFacts(state);
  return (await updateKnownDevice(db, gatewayId, state, reported)) ?? applyDeviceStateInFull(db, gatewayId, state, reported);
}

/**
 * The report of a device that exists, is not deleted and keeps its OS version, in one statement (one round trip:
 * plug -> Online waits for it): lock, update, and the DeviceAvailability event of a flip, with the counts as they
 * stand after it. Undefined when the device is not such a one (nothing was written).
 */
async function updateKnownDevice(
  db: Db, gatewayId: string, state: DeviceState, reported: ReturnType<typeof knownFacts>,
): Promise<DeviceChange | undefined> {
  const readiness = state.readiness || 'Offline';
  const detail = blankToNull(state.readinessDetail);
  const betterName = blankToNull(state.vendorDeviceName) ?? blankToNull(state.model);
  const version = reported.operating_system_version ?? null;
  const facts = Object.entries(reported).map(([column, value]) => sql`${sql.ref(column)} = ${value}`);
  const { rows } = await sql<{ id: string; availability: Availability; before: Availability }>`
    WITH current AS (
      SELECT id, name, availability, readiness FROM devices
      WHERE vendor_unique_identifier = ${state.vendorUniqueIdentifier} AND NOT deleted
        AND (${version}::text IS NULL OR operating_system_version IS NULL OR operating_system_version = ${version}::text)
      FOR UPDATE
    ), next AS (
      SELECT id, name, availability AS before, next_readiness(readiness, ${readiness}::text) AS readiness
      FROM current
    ), changed AS (
      UPDATE devices d SET ${sql.join([...facts, sql`
        name = CASE WHEN d.name = d.vendor_unique_identifier AND ${betterName}::text IS NOT NULL THEN ${betterName}::text ELSE d.name END,
        gateway_id = ${gatewayId}::uuid,
        readiness = next.readiness,
        readiness_detail = CASE WHEN next.readiness = ${HUB_REBOOTING} THEN NULL ELSE ${detail}::text END,
        availability = availability_of(next.readiness),
        last_connected_at = CASE WHEN next.readiness = 'Ready' AND next.before <> 'Online' THEN now() ELSE d.last_connected_at END,
        last_disconnected_at = CASE WHEN next.readiness <> 'Ready' AND next.before = 'Online' THEN now() ELSE d.last_disconnected_at END`])}
      FROM next WHERE d.id = next.id
      RETURNING d.id, next.name, d.availability, next.before
    ), cause AS (
      DELETE FROM availability_causes a USING changed c
      WHERE a.device_id = c.id AND c.availability <> c.before AND (a.expected = c.availability OR a.expires_at <= now())
      RETURNING a.*
    ), event AS (
      INSERT INTO events (event_type, device_id, device_name, message, bool_value, string_value, performed_by_id,
        performed_by_name, device_online_count, device_inuse_count)
      -- This statement's own change is not in the tallies yet (their trigger runs after it): counted by hand.
      SELECT 'DeviceAvailability', c.id, c.name, 'Device ' || c.availability, c.availability = 'Online',
        coalesce(k.reason, c.availability), k.performed_by_id, k.performed_by_name,
        others.online + (c.availability = 'Online')::int, lab.in_use
      FROM changed c CROSS JOIN lab_counts(c.id) others CROSS JOIN lab_counts() lab
        LEFT JOIN cause k ON k.device_id = c.id AND k.expected = c.availability AND k.expires_at > now()
      WHERE c.availability <> c.before
    )
    SELECT id, availability, before FROM changed`.execute(db);
  const row = rows[0];
  if (!row) return undefined;
  return { vendorUniqueIdentifier: state.vendorUniqueIdentifier, deviceId: row.id, availability: row.availability, flipped: row.availability !== row.before };
}

/** Insert or update with everything a report can mean: a new device (license), an undelete, an OS version change. */
async function applyDeviceStateInFull(
  db: Db, gatewayId: string, state: DeviceState, reported: ReturnType<typeof knownFacts>,
): Promise<DeviceChange> {
  return withTx(db, async (trx) => {
    // Insert as Offline first; the update below then records the first Online as a flip like any other.
    const inserted = await trx
      .insertInto('devices')
      .values({
        vendor_unique_identifier: state.vendorUniqueIdentifier,
        gateway_id: gatewayId,
        name: blankToNull(state.vendorDeviceName) ?? blankToNull(state.model) ?? state.vendorUniqueIdentifier,
        operating_system: 'Unknown',
        ...reported,
      })
      .onConflict((oc) => oc.column('vendor_unique_identifier').doNothing())
      .returning('id')
      .executeTakeFirst();
    const licenseDetail = inserted ? await disableBeyondLicense(trx, inserted.id) : undefined;
    const current = await trx
      .selectFrom('devices')
      .select(['id', 'name', 'availability', 'readiness', 'operating_system_version', 'deleted', 'enabled'])
      .where('vendor_unique_identifier', '=', state.vendorUniqueIdentifier)
      .forUpdate()
      .executeTakeFirstOrThrow();

    const readiness = nextReadiness(current.readiness, state.readiness);
    const availability = availabilityOf(readiness);
    const flipped = availability !== current.availability;
    // A deleted device that comes back Online was plugged in again: it is no longer deleted (wire rule 28,
    // docs/wire-rules.md), and counts toward the licensed limit again, beyond which it stays disabled like a new
    // device.
    const undeleted = current.deleted && flipped && availability === 'Online';
    if (undeleted) {
      await recordEvent(trx, {
        eventType: 'DeviceDeletion', message: 'Device Undeleted', boolValue: false,
        deviceId: current.id, deviceName: current.name,
      });
    }
    const relicenseDetail = undeleted && current.enabled ? await disableBeyondLicense(trx, current.id) : undefined;
    // A device first seen without facts was named after its identifier; name it properly once we can.
    const betterName = blankToNull(state.vendorDeviceName) ?? blankToNull(state.model);
    const rename = current.name === state.vendorUniqueIdentifier && betterName ? { name: betterName } : {};
    await trx
      .updateTable('devices')
      .set({
        ...reported,
        ...rename,
        gateway_id: gatewayId,
        readiness,
        readiness_detail: readiness === HUB_REBOOTING ? null
          : blankToNull(state.readinessDetail) ?? licenseDetail ?? relicenseDetail ?? null,
        availability,
        ...(undeleted ? { deleted: false } : {}),
        ...(flipped && availability === 'Online' ? { last_connected_at: sql`now()` } : {}),
        ...(flipped && availability === 'Offline' ? { last_disconnected_at: sql`now()` } : {}),
      })
      .where('id', '=', current.id)
      .execute();
    if (flipped) await recordAvailabilityEvents(trx, [{ id: current.id, name: current.name }], availability);
    const newVersion = reported.operating_system_version;
    if (newVersion && current.operating_system_version && newVersion !== current.operating_system_version) {
      await recordEvent(trx, {
        eventType: 'DeviceOperatingSystemChange', message: 'Device OS Changed', stringValue: newVersion,
        deviceId: current.id, deviceName: rename.name ?? current.name,
      });
    }
    return { vendorUniqueIdentifier: state.vendorUniqueIdentifier, deviceId: current.id, availability, flipped };
  });
}

/**
 * A newly discovered device beyond the licensed device limit stays disabled (spec 8); the event and the
 * readiness detail say why. Returns that detail, or undefined when the device is licensed.
 */
async function disableBeyondLicense(trx: Tx, deviceId: string): Promise<string | undefined> {
  let limit: number | null;
  try {
    limit = licensedDeviceLimit();
  } catch {
    return undefined; // a malformed limit is reported by the API (GET /Settings, enable); discovery goes on
  }
  if (limit === null) return undefined;
  await lockLicensedDevices(trx);
  if ((await countLicensedDevices(trx, deviceId)) < limit) return undefined;
  const detail = licensedLimitReached(limit);
  const device = await trx.updateTable('devices').set({ enabled: false }).where('id', '=', deviceId)
    .returning('name').executeTakeFirstOrThrow();
  await recordEvent(trx, {
    eventType: 'DeviceEnablement', message: 'Device Disabled', boolValue: false, stringValue: detail,
    deviceId, deviceName: device.name,
  });
  return detail;
}

interface TakeOfflineScope {
  gatewayId: string;
  /** Only devices NOT in this list (snapshot reconciliation); all of the gateway's devices when omitted. */
  keep?: string[];
  /** Only these devices (a DeviceRemoved). */
  only?: string[];
  /** Why, for readiness_detail. */
  detail: string;
}

/**
 * Takes a gateway's devices Offline in one transaction (gateway gone, or missing from its snapshot). Readiness
 * becomes Offline except for the hub's Rebooting, which waits for the device to come back Ready.
 */
export async function takeDevicesOffline(db: Db, scope: TakeOfflineScope): Promise<DeviceChange[]> {
  return withTx(db, (trx) => takeDevicesOfflineIn(trx, scope));
}

/** takeDevicesOffline inside the caller's transaction. */
export async function takeDevicesOfflineIn(trx: Tx, scope: TakeOfflineScope): Promise<DeviceChange[]> {
  {
    let target = trx
      .selectFrom('devices')
      .select(['id', 'name', 'vendor_unique_identifier', 'availability'])
      .where('gateway_id', '=', scope.gatewayId);
    if (scope.keep && scope.keep.length > 0) target = target.where('vendor_unique_identifier', 'not in', scope.keep);
    if (scope.only) {
      if (scope.only.length === 0) return [];
      target = target.where('vendor_unique_identifier', 'in', scope.only);
    }
    const rows = await target.forUpdate().execute();
    if (rows.length === 0) return [];

    await trx
      .updateTable('devices')
      .set({
        readiness: sql`CASE WHEN readiness = ${HUB_REBOOTING} THEN readiness ELSE 'Offline' END`,
        // A user's port switch says what it was; anything else is the scope's reason.
        readiness_detail: sql`CASE WHEN readiness = ${HUB_REBOOTING} THEN readiness_detail ELSE coalesce((
          SELECT reason FROM availability_causes a WHERE a.device_id = devices.id AND a.expected = 'Offline' AND a.expires_at > now()
        ), ${scope.detail}) END`,
        availability: 'Offline',
        last_disconnected_at: sql`CASE WHEN availability = 'Online' THEN now() ELSE last_disconnected_at END`,
      })
      .where('id', 'in', rows.map((r) => r.id))
      .execute();
    const flipped = rows.filter((r) => r.availability === 'Online');
    await recordAvailabilityEvents(trx, flipped, 'Offline');
    return rows.map((r) => ({
      vendorUniqueIdentifier: r.vendor_unique_identifier,
      deviceId: r.id,
      availability: 'Offline' as const,
      flipped: r.availability === 'Online',
    }));
  }
}

/**
 * One DeviceAvailability event per flipped device, with the lab's online / in-use counts as they stood right
 * after that flip (a batch is recorded as if its flips happened one after another).
 */
async function recordAvailabilityEvents(trx: Tx, devices: { id: string; name: string }[], availability: Availability): Promise<void> {
  if (devices.length === 0) return;
  const { rows: [counts] } = await sql<{ online: number; in_use: number }>`SELECT * FROM lab_counts()`.execute(trx);
  const onlineAfterAll = counts.online;
  const step = availability === 'Online' ? -1 : 1; // undo later flips to get the count after each one
  const causes = await claimCauses(trx, devices.map((device) => device.id), availability);
  await trx
    .insertInto('events')
    .values(
      devices.map((device, index) => ({
        event_type: 'DeviceAvailability',
        device_id: device.id,
        device_name: device.name,
        message: `Device ${availability}`,
        bool_value: availability === 'Online',
        string_value: causes.get(device.id)?.reason ?? availability,
        performed_by_id: causes.get(device.id)?.performed_by_id ?? null,
        performed_by_name: causes.get(device.id)?.performed_by_name ?? null,
        device_online_count: onlineAfterAll + step * (devices.length - 1 - index),
        device_inuse_count: counts.in_use,
      })),
    )
    .execute();
}

/**
 * Records a gateway's connection state; connecting also records its version and this hub replica, and a
 * disconnect keeps the USB hubs it last reported (GET /Gateway shows them, errored, while it is away).
 */
export async function setGatewayConnected(
  db: Db | Tx,
  gatewayId: string,
  connected: boolean,
  address?: { publicAddress: string; publicPort: number; version?: string },
  lastUsbHubs?: UsbHubReport[],
): Promise<void> {
  await db
    .updateTable('gateways')
    .set({
      connected,
      last_seen_at: sql`now()`,
      ...(address ? { public_address: address.publicAddress || null, public_port: address.publicPort || null } : {}),
      ...(address?.version !== undefined ? { version: address.version } : {}),
      ...(connected ? { hub_replica: thisReplica.id } : {}),
      ...(lastUsbHubs ? { last_usb_hubs: JSON.stringify(lastUsbHubs) } : {}),
    })
    .where('id', '=', gatewayId)
    .execute();
}

/** The USB hubs of a connected gateway as it reports them, so every replica can show them. */
export async function setGatewayUsbHubs(db: Db, gatewayId: string, hubs: UsbHubReport[]): Promise<void> {
  await db.updateTable('gateways').set({ last_usb_hubs: JSON.stringify(hubs) }).where('id', '=', gatewayId).execute();
}
