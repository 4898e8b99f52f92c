/** Device rows → wire Device model (spec 2.3); null keys are dropped later by the response writer. */
import { formatWireDate, type Application, type Device, type DeviceAvailabilityStatus, type DeviceBatteryStatus,
  type DeviceFormFactor, type DeviceOperatingSystem,
  type DeviceReadinessState } from '@devicelab/shared';
import type { ApplicationRow } from '../store/schema';
import { matchManagedApplication, toApplicationModel, unmanagedApplication } from './application-mapping';
import { sessionSignature } from './automation/session-signature';
import { bookerDisplayName, retainerDisplayName, type DeviceWithRetainer } from './device-queries';

export interface DeviceDetailOptions {
  properties?: boolean;
  /** Managed applications installed on the device. */
  applications?: boolean;
  /** All installed applications; unmanaged ones carry the all-zero Guid. */
  allApplications?: boolean;
}

/** The library record an install through the API put on the device, per package name (migration 027). */
export type InstalledRecords = ReadonlyMap<string, string>;

const date = (d: Date | null): string | undefined => (d ? formatWireDate(d) : undefined);
const opt = <T>(v: T | null): T | undefined => v ?? undefined;

export function toDeviceModel(
  row: DeviceWithRetainer, options: DeviceDetailOptions = {}, managed: ApplicationRow[] = [],
  installed: InstalledRecords = new Map(), now = new Date(),
): Device {
  const device: Device = {
    id: row.id,
    name: row.name,
    availability: row.availability as DeviceAvailabilityStatus,
    retainedById: opt(row.retained_by),
    retainedByDisplayName: retainerDisplayName(row),
    retainedByUserName: opt(row.retainer_login),
    enabled: row.enabled,
    batteryStatus: row.battery_status as DeviceBatteryStatus,
    batteryPercentCharged: row.battery_percent,
    diskSpace: Number(row.disk_space),
    diskSpaceUsed: Number(row.disk_space_used),
    slotNumber: opt(row.slot_number),
    // The current booking, or else the next one (domain/reservations.ts).
    nextReservationStartTime: date(row.booking_starts_at),
    nextReservationEndTime: date(row.booking_ends_at),
    reservedById: opt(row.booking_user_id),
    reservedByDisplayName: bookerDisplayName(row),
    automationSessionSignature: row.automation_session_id ? sessionSignature(row.automation_session_id) : undefined,
    automationSessionStartTime: date(row.automation_session_started_at),
    leaseEndTime: row.retained_by ? date(row.lease_ends_at) : undefined,
    idleReleaseTime: row.retained_by ? date(row.idle_release_at) : undefined,
    leaseName: row.retained_by && row.lease_name ? row.lease_name : undefined,
    // While retained the device is in use right now; otherwise the end of its last retain.
    lastInuseAt: date(row.retained_by ? now : row.last_inuse_at),
    lastDisconnectedAt: date(row.last_disconnected_at),
    lastConnectedAt: date(row.last_connected_at),
    deleted: row.deleted,
    notes: opt(row.notes),
    model: opt(row.model),
    operatingSystem: row.operating_system as DeviceOperatingSystem,
    operatingSystemVersion: opt(row.operating_system_version),
    operatingSystemBuild: opt(row.operating_system_build),
    macAddress: opt(row.mac_address),
    serialNumber: opt(row.serial_number),
    manufacturer: opt(row.manufacturer),
    friendlyModel: opt(row.friendly_model),
    vendorUniqueIdentifier: row.vendor_unique_identifier,
    vendorDeviceName: opt(row.vendor_device_name),
    deviceClass: opt(row.device_class),
    formFactor: row.form_factor as DeviceFormFactor,
    productType: opt(row.product_type),
    isAudioEnabled: false,
    hardwareModel: opt(row.hardware_model),
    usbHubSerialNumber: opt(row.usb_hub_serial_number),
    usbHubPortNumber: opt(row.usb_hub_port_number),
    usbLocation: opt(row.usb_location),
    bluetoothAddress: opt(row.bluetooth_address),
    readiness: row.readiness as DeviceReadinessState,
    readinessReason: opt(row.readiness_detail),
  };
  if (options.properties) {
    device.properties = row.properties.map((p) => ({ name: p.name, value: p.value, type: 'System' as const }));
  }
  if (options.applications || options.allApplications) {
    device.installedApplications = installedApplications(row, !!options.allApplications, managed, installed);
  }
  return device;
}

/** What the device reports, as library records: the one installed through the API, else the best match. */
function installedApplications(
  row: DeviceWithRetainer, all: boolean, managed: ApplicationRow[], installed: InstalledRecords,
): Application[] {
  const os = row.operating_system as DeviceOperatingSystem;
  const out: Application[] = [];
  for (const pkg of row.installed_packages) {
    const pinned = managed.filter((app) => app.id === installed.get(pkg.identifier));
    const app = matchManagedApplication(pkg, row.operating_system, pinned) ?? matchManagedApplication(pkg, row.operating_system, managed);
    if (app) out.push(toApplicationModel(app));
    else if (all) out.push(unmanagedApplication(pkg, os));
  }
  return out;
}
