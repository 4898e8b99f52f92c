/**
 * lockdownd on device port 62078, one session object per connection: QueryType, GetValue (global values, a Key,
 * a Domain), SetValue, Pair / ValidatePair / Unpair, StartSession (then TLS on the same socket) / StopSession,
 * StartService and Goodbye. Answers carry `Request`; failures carry `Error` (iOS 5+ style, no `Result`).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type * as net from 'node:net';
import type { SimIosDevice } from './device';
import { PlistChannel, encodeFrame } from './plist-channel';
import { PlistDict, isDict } from '@devicelab/shared';
import { SwitchableTransport, deviceSecureContext } from './tls-upgrade';

export const LOCKDOWN_PORT = 62078;

interface Session {
  id: string;
  hostId: string;
}

export function serveLockdown(device: SimIosDevice, socket: net.Socket): void {
  const transport = new SwitchableTransport(socket);
  let session: Session | null = null;

  const handle = async (message: PlistDict): Promise<void> => {
    const request = typeof message.Request === 'string' ? message.Request : '';
    const reply = (fields: PlistDict = {}): void => channel.send({ Request: request, ...fields });
    const fail = (error: string): void => channel.send({ Request: request, Error: error });
    switch (request) {
      case 'QueryType':
        return reply({ Type: 'com.apple.mobile.lockdown' });
      case 'GetValue': {
        const domain = typeof message.Domain === 'string' ? message.Domain : undefined;
        const key = typeof message.Key === 'string' ? message.Key : undefined;
        const value = device.lockdownValue(domain, key, session !== null);
        if (value === undefined) return fail('MissingValue');
        return reply({ ...(domain ? { Domain: domain } : {}), ...(key ? { Key: key } : {}), Value: value });
      }
      case 'SetValue': {
        if (!session) return fail('InvalidSession');
        if (message.Domain === undefined && message.Key === 'DeviceName' && typeof message.Value === 'string') {
          device.rename(message.Value);
          return reply();
        }
        return fail('MissingValue');
      }
      case 'Pair': {
        const record = message.PairRecord;
        if (!isDict(record) || typeof record.HostID !== 'string' || !Buffer.isBuffer(record.DeviceCertificate)) return fail('InvalidPairRecord');
        const refused = device.pair({
          hostId: record.HostID,
          systemBuid: typeof record.SystemBUID === 'string' ? record.SystemBUID : '',
          deviceCertificate: record.DeviceCertificate,
          hostCertificate: Buffer.isBuffer(record.HostCertificate) ? record.HostCertificate : Buffer.alloc(0),
          rootCertificate: Buffer.isBuffer(record.RootCertificate) ? record.RootCertificate : Buffer.alloc(0),
        });
        if (refused) return fail(refused);
        return reply({ EscrowBag: randomBytes(64) });
      }
      case 'ValidatePair': {
        const record = message.PairRecord;
        const hostId = isDict(record) && typeof record.HostID === 'string' ? record.HostID : '';
        return device.pairing(hostId) ? reply() : fail('InvalidHostID');
      }
      case 'Unpair': {
        const record = message.PairRecord;
        const hostId = isDict(record) && typeof record.HostID === 'string' ? record.HostID : '';
        return device.unpair(hostId) ? reply() : fail('InvalidHostID');
      }
      case 'StartSession': {
        const hostId = typeof message.HostID === 'string' ? message.HostID : '';
        const pairing = device.pairing(hostId);
        if (!pairing) return fail('InvalidHostID');
        if (session) return fail('SessionActive');
        session = { id: randomUUID().toUpperCase(), hostId };
        reply({ SessionID: session.id, EnableSessionSSL: true });
        // The answer above went out in plaintext; the host's next bytes are its ClientHello.
        transport.startTls(deviceSecureContext(device.tlsIdentity(pairing)));
        return;
      }
      case 'StopSession': {
        if (!session) return fail('NoRunningSession');
        session = null;
        await transport.stopTlsAfter(encodeFrame({ Request: request }));
        return;
      }
      case 'StartService': {
        if (!session) return fail('InvalidSession');
        const name = typeof message.Service === 'string' ? message.Service : '';
        const started = device.startService(name, session.hostId);
        if (!started) return fail('InvalidService');
        return reply({ Service: name, Port: started.port, ...(started.ssl ? { EnableServiceSSL: true } : {}) });
      }
      case 'Goodbye':
        reply({ Result: 'Success' });
        return;
      default:
        return fail('InvalidRequest');
    }
  };

  const channel = new PlistChannel(transport, handle);
  transport.on('data', (chunk: Buffer) => channel.receive(chunk));
  transport.on('close', () => channel.close());
  device.track(transport);
}
