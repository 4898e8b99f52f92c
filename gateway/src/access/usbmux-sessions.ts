/**
 * The device history's record of usbmux access: libimobiledevice tools open one usbmux connection per lockdownd
 * exchange and per device service (ideviceinfo 2-3, ideviceinstaller more), each a tunnel of its own. The
 * connections of one client (user and address) to one device under one retain are one session, reported as one
 * Note with their count once none has been open for a while, or at once when the retain ends.
 */
import type { DeviceAccessEvent } from '@devicelab/proto';

/** Quiet time after a client's last connection closed before its session is reported. */
export const SESSION_IDLE_MS = 30_000;

/** Who is behind a tunnel, as the hub named them. */
export interface UsbmuxClientIdentity {
  userLogin: string;
  remoteAddress: string;
  /** `<login> from <address> (through the hub)`. */
  who: string;
}

interface Session {
  udid: string;
  client: UsbmuxClientIdentity;
  startedAtMs: number;
  connections: number;
  services: number;
  open: number;
  timer?: NodeJS.Timeout;
}

export class UsbmuxSessions {
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly report: (event: DeviceAccessEvent) => void, private readonly idleMs = SESSION_IDLE_MS) {}

  /** A connection of `client` reached the device (`service`: not lockdownd); returns what to call when it closes. */
  opened(udid: string, retainId: string, client: UsbmuxClientIdentity, service: boolean): () => void {
    const key = JSON.stringify([udid, retainId, client.who]);
    let session = this.sessions.get(key);
    if (!session) this.sessions.set(key, session = { udid, client, startedAtMs: Date.now(), connections: 0, services: 0, open: 0 });
    clearTimeout(session.timer);
    session.connections += 1;
    if (service) session.services += 1;
    session.open += 1;
    const current = session;
    let closed = false;
    return () => {
      if (closed || this.sessions.get(key) !== current) return;
      closed = true;
      current.open -= 1;
      if (current.open === 0) current.timer = setTimeout(() => this.finish(key), this.idleMs).unref();
    };
  }

  /** The device's retain ended: its sessions are reported now. */
  endAll(udid: string): void {
    for (const [key, session] of [...this.sessions]) if (session.udid === udid) this.finish(key);
  }

  private finish(key: string): void {
    const session = this.sessions.get(key);
    if (!session) return;
    this.sessions.delete(key);
    clearTimeout(session.timer);
    const { connections, services, client } = session;
    const count = connections === 1 ? '1 connection' : `${connections} connections`;
    this.report({
      vendorUniqueIdentifier: session.udid, accepted: true, remoteAddress: client.remoteAddress, fingerprint: '',
      userLogin: client.userLogin, atMs: session.startedAtMs,
      message: `usbmux session of ${client.who}: ${count} (${connections - services} to lockdownd, ${services} to device services)`,
    });
  }
}
