/**
 * lockdownd (device port 62078) over usbmux: a session with the host's pair record (TLS on the same socket),
 * GetValue (whole tree or one domain), StartService. One connection per task, closed after it.
 */
import { type PlistDict, type PlistValue, isDict } from '@devicelab/shared';
import { DeviceCommandError } from '../device-driver';
import { type HostIdentity, PlistConnection } from './plist-connection';
import type { UsbmuxClient } from './usbmux';

const LOCKDOWN_PORT = 62078;

export interface PairRecord extends HostIdentity {
  hostId: string;
  systemBuid: string;
}

export function pairRecordOf(record: PlistDict): PairRecord | undefined {
  const { HostID, SystemBUID, HostCertificate, HostPrivateKey } = record;
  if (typeof HostID !== 'string' || !Buffer.isBuffer(HostCertificate) || !Buffer.isBuffer(HostPrivateKey)) return undefined;
  return { hostId: HostID, systemBuid: typeof SystemBUID === 'string' ? SystemBUID : '', certificate: HostCertificate, privateKey: HostPrivateKey };
}

/** Where a lockdown service listens on the device, and whether it wants TLS from the first byte. */
export interface ServiceEndpoint {
  port: number;
  ssl: boolean;
}

export class LockdownSession {
  private constructor(private readonly connection: PlistConnection) {}

  /** Connects to lockdownd and starts a TLS session with the pair record. */
  static async open(usbmux: UsbmuxClient, deviceId: number, pair: PairRecord, timeoutMs: number): Promise<LockdownSession> {
    const socket = await usbmux.connect(deviceId, LOCKDOWN_PORT);
    const connection = new PlistConnection(socket, timeoutMs, 'lockdownd');
    try {
      const started = await connection.request({ Label: 'devicelab-gateway', Request: 'StartSession', HostID: pair.hostId, SystemBUID: pair.systemBuid });
      if (typeof started.Error === 'string') {
        throw new DeviceCommandError(`lockdownd refused a session with this host's pair record (${started.Error}); pair the device again`, 'DEVICE_NOT_PAIRED');
      }
      if (started.EnableSessionSSL === true) await connection.upgradeToTls(pair);
      return new LockdownSession(connection);
    } catch (err) {
      connection.close();
      throw err;
    }
  }

  private async call(request: PlistDict): Promise<PlistDict> {
    const answer = await this.connection.request({ Label: 'devicelab-gateway', ...request });
    if (typeof answer.Error === 'string') throw new DeviceCommandError(`lockdownd ${String(request.Request)} failed: ${answer.Error}`, 'LOCKDOWN_ERROR');
    return answer;
  }

  /** The whole value tree (no domain) or one domain's dictionary. */
  async getValues(domain?: string): Promise<PlistDict> {
    const answer = await this.call({ Request: 'GetValue', ...(domain ? { Domain: domain } : {}) });
    const value: PlistValue | undefined = answer.Value;
    return isDict(value) ? value : {};
  }

  /** One value of the global domain (undefined when the device has none). */
  async getValue(key: string): Promise<PlistValue | undefined> {
    return (await this.call({ Request: 'GetValue', Key: key })).Value;
  }

  async startService(name: string): Promise<ServiceEndpoint> {
    const answer = await this.call({ Request: 'StartService', Service: name });
    return { port: Number(answer.Port), ssl: answer.EnableServiceSSL === true };
  }

  close(): void {
    this.connection.close();
  }
}
