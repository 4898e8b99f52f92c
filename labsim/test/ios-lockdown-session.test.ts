/**
 * The lockdown session at the wire, for what Debian's tools do not exercise: requests sent back to back inside
 * the TLS session are answered in order (the pairing pitfall of a naive simulator), and after StopSession the
 * same socket carries plaintext again, even with the host's close_notify arriving in between (pymobiledevice3
 * and libimobiledevice send one). The host side uses the pair record idevicepair saved, as a real client does.
 */
import * as net from 'node:net';
import { Duplex } from 'node:stream';
import * as tls from 'node:tls';
import { LabWorld, iosSpecFromPreset } from '../src';
import { PlistDict, decodePlistDict, encodePlist } from '@devicelab/shared';
import { usbmuxFrame } from './ios-helpers';

let world: LabWorld;
const spec = iosSpecFromPreset('ipad-10', 5);

beforeAll(async () => {
  world = new LabWorld();
  await world.start();
  await world.addIosDevice(spec);
  await world.iosFleet.pairWithIdevicepair(spec.udid);
}, 60_000);

afterAll(async () => {
  await world?.stop();
}, 60_000);

/** A host-side lockdown connection whose bytes go plain or through a TLS client, switchable like the device's. */
class HostLockdown {
  private tlsSocket: tls.TLSSocket | null = null;
  private wire: Duplex | null = null;
  private pending = Buffer.alloc(0);
  private readonly replies: PlistDict[] = [];
  private waiters: (() => void)[] = [];

  constructor(private readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => (this.wire ? this.wire.push(chunk) : this.receive(chunk)));
  }

  static async connect(): Promise<HostLockdown> {
    const socket = net.connect(world.iosFleet.usbmuxd.socketPath);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const deviceId = await new Promise<number>((resolve) => {
      socket.once('data', (chunk: Buffer) => resolve(Number((decodePlistDict(chunk.subarray(16)).DeviceList as PlistDict[])[0].DeviceID)));
      socket.write(usbmuxFrame({ MessageType: 'ListDevices' }, 1));
    });
    const result = await new Promise<PlistDict>((resolve) => {
      socket.once('data', (chunk: Buffer) => resolve(decodePlistDict(chunk.subarray(16))));
      socket.write(usbmuxFrame({ MessageType: 'Connect', DeviceID: deviceId, PortNumber: ((62078 & 0xff) << 8) | (62078 >> 8) }, 2));
    });
    expect(result).toEqual({ MessageType: 'Result', Number: 0 });
    return new HostLockdown(socket);
  }

  send(message: PlistDict): void {
    const body = encodePlist(message);
    const header = Buffer.alloc(4);
    header.writeUInt32BE(body.length);
    (this.tlsSocket ?? this.socket).write(Buffer.concat([header, body]));
  }

  async next(): Promise<PlistDict> {
    while (!this.replies.length) await new Promise<void>((resolve) => this.waiters.push(resolve));
    return this.replies.shift()!;
  }

  async startTls(record: PlistDict): Promise<void> {
    const socket = this.socket;
    this.wire = new Duplex({ read() {}, write(chunk, _e, done) { socket.write(chunk, () => done()); } });
    this.tlsSocket = tls.connect({
      socket: this.wire, key: record.HostPrivateKey as Buffer, cert: record.HostCertificate as Buffer, rejectUnauthorized: false,
      ciphers: 'DEFAULT:@SECLEVEL=0', minVersion: 'TLSv1',
    });
    this.tlsSocket.on('data', (chunk: Buffer) => this.receive(chunk));
    await new Promise<void>((resolve, reject) => this.tlsSocket!.once('secureConnect', resolve).once('error', reject));
  }

  /** Ends TLS with a close_notify, as libimobiledevice does after StopSession; later bytes are plaintext. */
  async stopTls(): Promise<void> {
    const session = this.tlsSocket!;
    this.tlsSocket = null;
    await new Promise<void>((resolve) => session.end(() => resolve()));
    this.wire = null;
  }

  close(): void {
    this.socket.destroy();
  }

  private receive(chunk: Buffer): void {
    this.pending = Buffer.concat([this.pending, chunk]);
    while (this.pending.length >= 4 && this.pending.length >= 4 + this.pending.readUInt32BE(0)) {
      const length = this.pending.readUInt32BE(0);
      this.replies.push(decodePlistDict(this.pending.subarray(4, 4 + length)));
      this.pending = this.pending.subarray(4 + length);
    }
    for (const wake of this.waiters.splice(0)) wake();
  }
}

it('answers back-to-back requests in a TLS session in order, then speaks plaintext after StopSession', async () => {
  const record = decodePlistDict(world.iosFleet.usbmuxd.pairRecord(spec.udid)!);
  const lockdown = await HostLockdown.connect();
  try {
    lockdown.send({ Label: 'test', Request: 'StartSession', HostID: record.HostID, SystemBUID: record.SystemBUID });
    const started = await lockdown.next();
    expect(started).toEqual({ Request: 'StartSession', SessionID: expect.any(String), EnableSessionSSL: true });
    await lockdown.startTls(record);

    for (const Key of ['TimeIntervalSince1970', 'TimeZoneOffsetFromUTC', 'TimeZone', 'SerialNumber']) lockdown.send({ Label: 'test', Request: 'GetValue', Key });
    const answers = [await lockdown.next(), await lockdown.next(), await lockdown.next(), await lockdown.next()];
    expect(answers.map((a) => a.Key)).toEqual(['TimeIntervalSince1970', 'TimeZoneOffsetFromUTC', 'TimeZone', 'SerialNumber']);
    expect(answers[2].Value).toBe('Europe/Berlin');
    expect(answers[3].Value).toBe(spec.serialNumber);

    lockdown.send({ Label: 'test', Request: 'StopSession', SessionID: started.SessionID });
    expect(await lockdown.next()).toEqual({ Request: 'StopSession' });
    await lockdown.stopTls();

    lockdown.send({ Label: 'test', Request: 'GetValue', Key: 'ProductType' });
    expect(await lockdown.next()).toEqual({ Request: 'GetValue', Key: 'ProductType', Value: 'iPad13,18' });
    // Outside the session the device keeps its private values to itself again.
    lockdown.send({ Label: 'test', Request: 'GetValue', Key: 'SerialNumber' });
    expect(await lockdown.next()).toEqual({ Request: 'GetValue', Error: 'MissingValue' });
  } finally {
    lockdown.close();
  }
}, 30_000);

it('refuses StartSession for a host it never paired with', async () => {
  const lockdown = await HostLockdown.connect();
  try {
    lockdown.send({ Label: 'test', Request: 'StartSession', HostID: 'F0E1D2C3-0000-4000-8000-000000000000', SystemBUID: 'x' });
    expect(await lockdown.next()).toEqual({ Request: 'StartSession', Error: 'InvalidHostID' });
    lockdown.send({ Label: 'test', Request: 'StartService', Service: 'com.apple.afc' });
    expect(await lockdown.next()).toEqual({ Request: 'StartService', Error: 'InvalidSession' });
  } finally {
    lockdown.close();
  }
});
