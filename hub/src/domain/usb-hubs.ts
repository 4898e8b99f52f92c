/**
 * USB hubs through the gateways that own them (spec 4.2 UsbPort, 4.6 Gateway): the GatewayDescription list
 * from what connected gateways report, and port / reboot commands sent over the link to the gateway that
 * reports the hub. A device's hub and port come from its record, so a port that is Off (device Offline,
 * gone from its gateway's inventory) can be switched back on.
 */
import type { CommandAction, UsbHubReport } from '@devicelab/proto';
import {
  ApiFailure, formatWireDate, parseEnumValue, UsbHubDeviceFlags, UsbHubPortState, usbHubPortStateAliases,
  type DataPortStateName, type FleetGatewayDescription, type UsbHub,
} from '@devicelab/shared';
import { GatewayUnavailableError, type GatewayDirectory } from '../gateways/gateway-directory';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import type { Db } from '../store/database';
import { expectAvailability, portSwitchCause, withdrawCauses } from './availability-causes';
import { resolveDevice } from './device-queries';
import { COMMAND_TIMEOUTS_MS, commandFailure } from './gateway-commands';
import { readNow, type KeepRead } from './kept-read';

/**
 * Every registered gateway, connected ones with their hubs as reported and disconnected ones with the hubs they
 * last reported, marked errored; every port of each hub, in a stable order (by name). A port names its device as
 * the hub's records do (device name and serial number), also while the device is off USB and its gateway
 * knows it only by the vendor unique identifier it last saw there. A data-mode port's state is written as
 * `dataPortState` says (`Data` or `Sync`, wire rule 26 of docs/wire-rules.md).
 */
export async function listGateways(
  db: Db, gateways: GatewayDirectory, dataPortState: DataPortStateName, keep: KeepRead = readNow,
): Promise<FleetGatewayDescription[]> {
  await gateways.settled?.();
  const connected = new Map(gateways.connectedGateways().map((g) => [g.id, g]));
  const registered = await keep('gateways', () => db.selectFrom('gateways')
    .select(['id', 'name', 'public_address', 'public_port', 'last_seen_at', 'version', 'hub_replica', 'last_usb_hubs'])
    .orderBy('name').execute(), ['gateways']);
  const listed = registered.map((row) => {
    const live = connected.get(row.id);
    const usbHubs = live ? live.usbHubs ?? [] : (row.last_usb_hubs ?? []).map((hub) => ({
      ...hub, isErrored: true, errorMessage: hub.errorMessage || `Gateway ${row.name} is not connected.`,
    }));
    return { row, live, usbHubs };
  });
  const attached = [...new Set(listed.flatMap((g) => g.usbHubs.flatMap((hub) => (hub.ports ?? [])
    .map((port) => port.deviceSerialNumber).filter((id): id is string => !!id))))];
  const rows = attached.length === 0 ? [] : await keep(`gateways:devices:${attached.join('\n')}`, () => db.selectFrom('devices')
    .select(['vendor_unique_identifier', 'name', 'serial_number'])
    .where('vendor_unique_identifier', 'in', attached).where('deleted', '=', false).execute(), ['devices']);
  const records = new Map(rows.map((row) => [row.vendor_unique_identifier, row]));
  return listed.map(({ row, live, usbHubs }) => ({
    name: row.name,
    publicAddress: live?.publicAddress ?? row.public_address ?? '',
    publicPort: live?.publicPort ?? row.public_port ?? 0,
    usbHubList: usbHubs.map((hub) => usbHubModel(hub, records, dataPortState)),
    isConnected: live !== undefined,
    lastSeenAt: row.last_seen_at ? formatWireDate(row.last_seen_at) : undefined,
    version: live?.version || row.version || undefined,
    hubReplica: row.hub_replica ?? undefined,
  }));
}

type DeviceRecord = { name: string; serial_number: string | null };

function usbHubModel(hub: UsbHubReport, records: Map<string, DeviceRecord>, dataPortState: DataPortStateName): UsbHub {
  return {
    name: hub.name, location: hub.location, serialNumber: hub.serialNumber, description: hub.description,
    model: hub.model, firmware: hub.firmware, firmwareDate: hub.firmwareDate, uptime: Math.round(hub.uptimeSeconds),
    fiveVoltNow: hub.fiveVoltNow, fiveVoltMin: hub.fiveVoltMin, fiveVoltMax: hub.fiveVoltMax,
    errorMessage: hub.errorMessage, isErrored: hub.isErrored,
    devices: (hub.ports ?? []).map((port) => {
      const flags = (port.flags ?? []).filter((flag): flag is UsbHubDeviceFlags => (UsbHubDeviceFlags as readonly string[]).includes(flag));
      const record = port.deviceSerialNumber ? records.get(port.deviceSerialNumber) : undefined;
      const state = parseEnumValue(UsbHubPortState, port.state) ?? 'Unknown';
      return {
        name: record?.name ?? port.name, location: port.location,
        serialNumber: record?.serial_number ?? port.deviceSerialNumber,
        usbHubSerialNumber: hub.serialNumber, usbHubPortNumber: port.portNumber, milliamps: port.milliamps,
        state: state === 'Data' ? dataPortState : state,
        flags: flags.length > 0 ? flags.join(', ') : 'None',
        chargingTime: Math.round(port.chargingSeconds), chargingProfile: port.chargingProfile,
      };
    }),
  };
}

async function assertHubConnected(gateways: GatewayDirectory, hubSerialNumber: string): Promise<void> {
  await gateways.settled?.();
  const known = gateways.connectedGateways().some((g) => (g.usbHubs ?? []).some((hub) => hub.serialNumber === hubSerialNumber));
  if (!known) throw new ApiFailure(`USB hub '${hubSerialNumber}' not found.`);
}

/** A state a port can be switched to. */
type SwitchablePortState = Exclude<UsbHubPortState, 'Unknown'>;

/** `usbHubPortState` text to a state a port can be switched to (Sync is Data; Unknown is no state). */
export function parsePortState(text: string | undefined): SwitchablePortState {
  if (text === undefined) throw new ApiFailure("Parameter 'usbHubPortState' is required.");
  const state = parseEnumValue(UsbHubPortState, text, usbHubPortStateAliases);
  if (!state || state === 'Unknown') {
    // The vendor's wording (wire rule 29, docs/wire-rules.md), which clients may match on.
    throw new ApiFailure('Unknown value. Expected values are: Off, Data, Sync, Charge.');
  }
  return state;
}

async function send(gateways: GatewayDirectory, hubSerialNumber: string, action: CommandAction): Promise<void> {
  let result;
  try {
    result = await gateways.sendUsbHubCommand(hubSerialNumber, action, COMMAND_TIMEOUTS_MS[action.action]);
  } catch (err) {
    if (err instanceof GatewayUnavailableError) throw new ApiFailure(`USB hub '${hubSerialNumber}' is not reachable: ${err.message}`, 'GATEWAY_OFFLINE');
    throw err;
  }
  if (!result.ok) throw commandFailure(action, `USB hub '${hubSerialNumber}'`, result);
}

/**
 * POST /Gateway/UsbHub?update: one port, or every port of the hub when `port` is omitted. The devices on those
 * ports learn who switched them and how, for the availability flips that follow (availability-causes.ts).
 */
export async function setHubPortState(
  db: Db, gateways: GatewayDirectory, user: AuthenticatedUser, hubSerialNumber: string, port: number | undefined,
  state: SwitchablePortState,
): Promise<void> {
  if (port !== undefined && port < 1) throw new ApiFailure(`Invalid USB hub port ${port}: ports are numbered from 1.`);
  await assertHubConnected(gateways, hubSerialNumber);
  let onPorts = db.selectFrom('devices').select('id').where('usb_hub_serial_number', '=', hubSerialNumber).where('deleted', '=', false);
  if (port !== undefined) onPorts = onPorts.where('usb_hub_port_number', '=', port);
  const devices = (await onPorts.execute()).map((row) => row.id);
  const cause = portSwitchCause(state, user);
  await expectAvailability(db, devices, cause);
  try {
    await send(gateways, hubSerialNumber, {
      action: 'setUsbPortState', setUsbPortState: { hubSerialNumber, portNumber: port ?? 0, state },
    });
  } catch (err) {
    await withdrawCauses(db, devices, cause);
    throw err;
  }
}

export async function rebootUsbHub(gateways: GatewayDirectory, hubSerialNumber: string): Promise<void> {
  await assertHubConnected(gateways, hubSerialNumber);
  await send(gateways, hubSerialNumber, { action: 'rebootUsbHub', rebootUsbHub: { hubSerialNumber } });
}

/**
 * POST /Device/UsbPort?update: the port of one device, or with `*` the port of every device that hangs from
 * a hub (a device without a known hub port is skipped by `*`, a failure when named).
 */
export async function setDevicePortState(
  db: Db, gateways: GatewayDirectory, user: AuthenticatedUser, identifier: string, state: SwitchablePortState,
): Promise<void> {
  if (identifier.trim() === '*') {
    const rows = await db.selectFrom('devices').select(['name', 'usb_hub_serial_number', 'usb_hub_port_number'])
      .where('deleted', '=', false).where('usb_hub_serial_number', 'is not', null).where('usb_hub_port_number', 'is not', null)
      .orderBy('usb_hub_serial_number').orderBy('usb_hub_port_number').execute();
    const failures: string[] = [];
    for (const row of rows) {
      try {
        await setHubPortState(db, gateways, user, row.usb_hub_serial_number ?? '', row.usb_hub_port_number ?? 0, state);
      } catch (err) {
        failures.push(`${row.name}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    if (failures.length > 0) throw new ApiFailure(`Some USB ports were not switched: ${failures.join('; ')}`);
    return;
  }
  const device = await resolveDevice(db, identifier);
  if (!device.usb_hub_serial_number || !device.usb_hub_port_number) {
    throw new ApiFailure(`Device '${device.name}' is not on a known USB hub port.`);
  }
  await setHubPortState(db, gateways, user, device.usb_hub_serial_number, device.usb_hub_port_number, state);
}
