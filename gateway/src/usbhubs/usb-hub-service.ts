/**
 * The gateway's USB hubs as one service: owns the hub controllers, knows which device is on which port
 * (PortMap plus the device states the driver reports), builds the UsbHubsReport the hub serves at
 * GET /Gateway, carries out port and reboot commands, and passes on Events of what the gateway did on its own.
 */
import type { DeviceState, RebootUsbHub, SetUsbPortState, UsbHubEvent, UsbHubReport, UsbHubsReport } from '@devicelab/proto';
import { parseEnumValue, UsbHubPortState, usbHubPortStateAliases, type Logger } from '@devicelab/shared';
import type { PortAssignment, PortMap } from './port-mapping';
import { UsbHubError, type UsbHubController, type UsbHubStatus, type UsbPortMode, type UsbPortStatus } from './usb-hub-controller';

interface UsbHubsListener {
  report(report: UsbHubsReport): void;
  /** False when the event could not be delivered now (hub away): it is kept for `takePendingEvents`. */
  event(event: UsbHubEvent): boolean;
}

/** Events kept while the hub is away; the oldest go first beyond this. */
const MAX_PENDING_EVENTS = 1_000;
/**
 * How long a port switch that takes the data line away (Off, Charge) waits for its devices to leave adb or usbmuxd
 * (which notice a USB detach within a second or so): their removal reaches the hub ahead of the command's result,
 * so the hub's records show them Offline when the call returns. A device still there after it is left to the
 * driver's own report.
 */
const DEPARTURE_WAIT_MS = 5_000;

export class UsbHubService {
  private readonly devices = new Map<string, DeviceState>();
  /** Hardware serial -> vendor unique identifier, remembered so a port whose device is away still names it. */
  private readonly aliases = new Map<string, string>();
  private readonly listeners: UsbHubsListener[] = [];
  private lastReport = '';
  private pendingEvents: UsbHubEvent[] = [];
  private reportTimer: NodeJS.Timeout | undefined;
  /** Called on every device removal: port switches waiting for their devices to leave. */
  private readonly removalWaiters = new Set<() => void>();

  constructor(
    private readonly controllers: UsbHubController[],
    private readonly portMap: PortMap,
    private readonly logger: Logger,
  ) {
    for (const controller of controllers) controller.onStatus(() => this.scheduleReport());
  }

  async start(): Promise<void> {
    await Promise.all(this.controllers.map((controller) => controller.start()));
  }

  async stop(): Promise<void> {
    clearTimeout(this.reportTimer);
    await Promise.all(this.controllers.map((controller) => controller.stop()));
  }

  subscribe(listener: UsbHubsListener): void {
    this.listeners.push(listener);
  }

  /** The driver's view of a device (names, readiness, battery); the port-mapped driver feeds it. */
  deviceChanged(state: DeviceState): void {
    this.devices.set(state.vendorUniqueIdentifier, state);
    if (state.serialNumber) this.aliases.set(state.serialNumber, state.vendorUniqueIdentifier);
    this.scheduleReport();
  }

  deviceRemoved(vendorUniqueIdentifier: string): void {
    this.devices.delete(vendorUniqueIdentifier);
    this.scheduleReport();
    for (const waiter of this.removalWaiters) waiter();
  }

  device(vendorUniqueIdentifier: string): DeviceState | undefined {
    return this.devices.get(vendorUniqueIdentifier);
  }

  portOf(state: DeviceState): PortAssignment | undefined {
    return this.portMap.portOf(state);
  }

  controller(hubSerialNumber: string): UsbHubController | undefined {
    return this.controllers.find((controller) => controller.status().serialNumber === hubSerialNumber);
  }

  /** Every device mapped to a port of a hub, with the hub's and the port's status. */
  portsWithDevices(): Array<{ controller: UsbHubController; hub: UsbHubStatus; port: number; status: UsbPortStatus; device: string }> {
    const result = [];
    for (const controller of this.controllers) {
      const hub = controller.status();
      for (const status of hub.ports) {
        const device = this.portMap.deviceOn(hub.serialNumber, status.port);
        if (device) result.push({ controller, hub, port: status.port, status, device: this.resolve(device) });
      }
    }
    return result;
  }

  report(): UsbHubsReport {
    return { hubs: this.controllers.map((controller) => this.hubReport(controller.kind, controller.status())) };
  }

  async setPortState(command: SetUsbPortState): Promise<void> {
    const state = parseEnumValue(UsbHubPortState, command.state, usbHubPortStateAliases);
    if (!state || state === 'Unknown') throw new UsbHubError(`Unknown port state '${command.state}': expected Off, Data or Charge`);
    const controller = this.requireController(command.hubSerialNumber);
    const port = command.portNumber > 0 ? command.portNumber : undefined;
    const leaving = state === 'Off' || state === 'Charge' ? this.devicesOn(command.hubSerialNumber, port) : [];
    await controller.setPortMode(port, state as UsbPortMode);
    this.reportNow();
    await this.departure(leaving);
  }

  async reboot(command: RebootUsbHub): Promise<void> {
    await this.requireController(command.hubSerialNumber).reboot();
    this.reportNow();
  }

  /** Records something the gateway did to a device's port as an Event at the hub (at `atMs`, default now). */
  emitEvent(vendorUniqueIdentifier: string, message: string, detail = '', isSuccess = true, atMs = Date.now()): void {
    const event: UsbHubEvent = { vendorUniqueIdentifier, eventType: 'Note', message, detail, isSuccess, atMs };
    this.logger.info({ device: vendorUniqueIdentifier, message }, 'USB hub event');
    const delivered = this.listeners.map((listener) => listener.event(event));
    if (delivered.length > 0 && !delivered.some(Boolean)) {
      this.pendingEvents.push(event);
      if (this.pendingEvents.length > MAX_PENDING_EVENTS) this.pendingEvents.shift();
    }
  }

  /** Events that could not be delivered while the hub was away, oldest first (the link sends them on connect). */
  takePendingEvents(): UsbHubEvent[] {
    const events = this.pendingEvents;
    this.pendingEvents = [];
    return events;
  }

  /** The devices present now on the hub's port (every port: undefined). */
  private devicesOn(hubSerialNumber: string, port: number | undefined): string[] {
    return [...this.devices.values()]
      .filter((state) => state.usbHubSerialNumber === hubSerialNumber && (port === undefined || state.usbHubPortNumber === port))
      .map((state) => state.vendorUniqueIdentifier);
  }

  /** Resolves once none of these devices is present, or after DEPARTURE_WAIT_MS. */
  private departure(leaving: string[]): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (leaving.some((id) => this.devices.has(id))) return;
        finish();
      };
      const finish = () => {
        clearTimeout(timer);
        this.removalWaiters.delete(check);
        resolve();
      };
      const timer = setTimeout(finish, DEPARTURE_WAIT_MS);
      this.removalWaiters.add(check);
      check();
    });
  }

  private requireController(hubSerialNumber: string): UsbHubController {
    const controller = this.controller(hubSerialNumber);
    if (!controller) throw new UsbHubError(`This gateway has no USB hub with serial number '${hubSerialNumber}'`);
    return controller;
  }

  /** A configured device may be named by hardware serial: report it under its vendor unique identifier. */
  private resolve(device: string): string {
    if (this.devices.has(device)) return device;
    return this.aliases.get(device) ?? device;
  }

  private hubReport(kind: string, hub: UsbHubStatus): UsbHubReport {
    return {
      serialNumber: hub.serialNumber, name: hub.name, location: hub.location, description: hub.description,
      model: hub.model, firmware: hub.firmware, firmwareDate: hub.firmwareDate, uptimeSeconds: hub.uptimeSeconds,
      fiveVoltNow: hub.fiveVoltNow, fiveVoltMin: hub.fiveVoltMin, fiveVoltMax: hub.fiveVoltMax,
      errorMessage: hub.errorMessage, isErrored: hub.isErrored, kind,
      ports: hub.ports.map((port) => {
        const mapped = this.portMap.deviceOn(hub.serialNumber, port.port);
        const id = mapped ? this.resolve(mapped) : '';
        const device = id ? this.devices.get(id) : undefined;
        return {
          portNumber: port.port,
          name: device ? device.vendorDeviceName || device.friendlyModel || device.model || id : id,
          location: device?.usbLocation ?? '',
          deviceSerialNumber: id,
          milliamps: port.milliamps,
          state: port.state,
          flags: port.flags,
          chargingSeconds: port.chargingSeconds,
          chargingProfile: port.chargingProfile,
        };
      }),
    };
  }

  /** Sends the report when it changed; status bursts (a poll reads every port) collapse into one message. */
  private scheduleReport(delayMs = 100): void {
    if (this.reportTimer && delayMs > 0) return;
    clearTimeout(this.reportTimer);
    this.reportTimer = setTimeout(() => this.reportNow(), delayMs);
  }

  /**
   * Sends the report at once when it changed. A port switch or hub reboot reports before its command resolves, so
   * the link carries the new port states ahead of the command's result: the hub records them before it answers.
   */
  private reportNow(): void {
    clearTimeout(this.reportTimer);
    this.reportTimer = undefined;
    const report = this.report();
    const text = JSON.stringify(report);
    if (text === this.lastReport) return;
    this.lastReport = text;
    for (const listener of this.listeners) listener.report(report);
  }

  /**
   * The full report for a new link session (the hub has none after a reconnect); it counts as sent, so only a
   * later change triggers the next one.
   */
  resend(): UsbHubsReport {
    const report = this.report();
    this.lastReport = JSON.stringify(report);
    return report;
  }
}
