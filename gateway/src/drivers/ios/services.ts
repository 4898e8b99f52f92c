/**
 * Opens lockdown services on a device: a lockdown session starts the service, then a new usbmux connection to
 * the port it names (TLS from the first byte when the service asks for it, with the same host identity).
 */
import * as tls from 'node:tls';
import type * as net from 'node:net';
import { type PairRecord, type ServiceEndpoint, LockdownSession } from './lockdown';
import { PlistConnection } from './plist-connection';
import type { UsbmuxClient } from './usbmux';

export interface DeviceLink {
  usbmux: UsbmuxClient;
  deviceId: number;
  pair: PairRecord;
  timeoutMs: number;
}

/** Runs `task` in a lockdown session and closes it after. */
export async function withLockdown<T>(link: DeviceLink, task: (session: LockdownSession) => Promise<T>): Promise<T> {
  const session = await LockdownSession.open(link.usbmux, link.deviceId, link.pair, link.timeoutMs);
  try {
    return await task(session);
  } finally {
    session.close();
  }
}

/** A raw byte connection to a started service. */
export async function openServiceSocket(link: DeviceLink, service: string): Promise<net.Socket | tls.TLSSocket> {
  return connectService(link, await withLockdown(link, (session) => session.startService(service)));
}

/** Connects to a service a lockdown session started (TLS from the first byte when it asked for it). */
export async function connectService(link: DeviceLink, endpoint: ServiceEndpoint): Promise<net.Socket | tls.TLSSocket> {
  const socket = await link.usbmux.connect(link.deviceId, endpoint.port);
  if (!endpoint.ssl) return socket;
  const secure = tls.connect({
    socket, cert: link.pair.certificate, key: link.pair.privateKey, rejectUnauthorized: false, ciphers: 'DEFAULT:@SECLEVEL=0', minVersion: 'TLSv1',
  });
  await new Promise<void>((resolve, reject) => secure.once('secureConnect', resolve).once('error', reject));
  return secure;
}

/** A plist (lockdown-framed) service such as installation_proxy or diagnostics_relay; closed after `task`. */
export async function withPlistService<T>(link: DeviceLink, service: string | ServiceEndpoint, timeoutMs: number, task: (connection: PlistConnection) => Promise<T>): Promise<T> {
  const socket = typeof service === 'string' ? await openServiceSocket(link, service) : await connectService(link, service);
  const connection = new PlistConnection(socket as net.Socket, timeoutMs, typeof service === 'string' ? service : `service port ${service.port}`);
  try {
    return await task(connection);
  } finally {
    connection.close();
  }
}
