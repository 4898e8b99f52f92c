/**
 * The gateway sessions of this hub replica: one per gateway name (a newer connection replaces an older one), and
 * which session holds each device and USB hub now, so the GatewayDirectory routes a device's command, retain or
 * tunnel to its gateway.
 *
 * Events: `removed` (session): a session left the table (it ended, or a newer connection replaced it).
 */
import { EventEmitter } from 'node:events';
import type { UsbHubReport } from '@devicelab/proto';

/** What the table needs of a session. */
export interface TabledSession {
  readonly gatewayName: string;
  readonly gatewayId: string;
  readonly devices: HeldDevices;
  /** The gateway's USB hubs as last reported. */
  readonly usbHubs: readonly UsbHubReport[];
}

interface DeviceIndex {
  held(session: TabledSession, vendorUniqueIdentifier: string): void;
  released(session: TabledSession, vendorUniqueIdentifier: string): void;
}

/** The devices one session's gateway reports now (any readiness); changes keep the table's index current. */
export class HeldDevices implements Iterable<string> {
  private readonly ids = new Set<string>();

  constructor(private readonly index: DeviceIndex, private readonly session: TabledSession) {}

  has(vendorUniqueIdentifier: string): boolean {
    return this.ids.has(vendorUniqueIdentifier);
  }

  add(vendorUniqueIdentifier: string): void {
    this.ids.add(vendorUniqueIdentifier);
    this.index.held(this.session, vendorUniqueIdentifier);
  }

  delete(vendorUniqueIdentifier: string): void {
    if (this.ids.delete(vendorUniqueIdentifier)) this.index.released(this.session, vendorUniqueIdentifier);
  }

  /** A full inventory: exactly these devices. */
  replace(vendorUniqueIdentifiers: readonly string[]): void {
    const keep = new Set(vendorUniqueIdentifiers);
    for (const id of [...this.ids]) if (!keep.has(id)) this.delete(id);
    for (const id of keep) this.add(id);
  }

  [Symbol.iterator](): Iterator<string> {
    return this.ids[Symbol.iterator]();
  }
}

export class SessionTable<S extends TabledSession = TabledSession> extends EventEmitter implements DeviceIndex {
  private readonly byName = new Map<string, S>();
  private readonly byDevice = new Map<string, S>();

  /** Makes `session` its gateway's session; returns the one it replaces (to be ended by the caller). */
  establish(session: S): S | undefined {
    const previous = this.byName.get(session.gatewayName);
    this.byName.set(session.gatewayName, session);
    for (const id of session.devices) this.byDevice.set(id, session);
    if (previous && previous !== session) this.forget(previous);
    return previous === session ? undefined : previous;
  }

  /** An ended session leaves the table (unless a newer one replaced it already). */
  remove(session: S): void {
    if (this.byName.get(session.gatewayName) !== session) return;
    this.byName.delete(session.gatewayName);
    this.forget(session);
  }

  all(): S[] {
    return [...this.byName.values()];
  }

  ofGateway(gatewayId: string): S[] {
    return this.all().filter((session) => session.gatewayId === gatewayId);
  }

  /** The session whose gateway reports this device now. */
  holding(vendorUniqueIdentifier: string): S | undefined {
    return this.byDevice.get(vendorUniqueIdentifier);
  }

  holdingUsbHub(serialNumber: string): S | undefined {
    return this.all().find((session) => session.usbHubs.some((hub) => hub.serialNumber === serialNumber));
  }

  held(session: TabledSession, vendorUniqueIdentifier: string): void {
    if (this.byName.get(session.gatewayName) === session) this.byDevice.set(vendorUniqueIdentifier, session as S);
  }

  /** A device one gateway stopped reporting may still be reported by another (it moved). */
  released(session: TabledSession, vendorUniqueIdentifier: string): void {
    if (this.byDevice.get(vendorUniqueIdentifier) !== session) return;
    const other = this.all().find((s) => s !== session && s.devices.has(vendorUniqueIdentifier));
    if (other) this.byDevice.set(vendorUniqueIdentifier, other);
    else this.byDevice.delete(vendorUniqueIdentifier);
  }

  private forget(session: S): void {
    for (const id of session.devices) this.released(session, id);
    this.emit('removed', session);
  }
}
