/**
 * The adb endpoint's bridge (adb-bridge.ts) seen by a raw adb transport client, against a labsim device behind
 * the world's real adb server: the AUTH handshake with a key made by the real `adb keygen`, the limits before
 * AUTH, refusals told as access events, and a stream carried to the device and back.
 */
import { execFileSync } from 'node:child_process';
import { constants, createPrivateKey, privateEncrypt, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Adb from '@devicefarmer/adbkit';
import { defaultAndroidLab, LabWorld } from '@devicelab/labsim';
import type { AccessEndpoint, DeviceAccessEvent } from '@devicelab/proto';
import {
  A_AUTH, A_CLSE, A_CNXN, A_OKAY, A_OPEN, A_WRTE, AUTH_RSAPUBLICKEY, AUTH_SIGNATURE, AUTH_TOKEN, type AdbPacket,
  AdbPacketReader, adbPacketHeader, createLogger, parseAdbPublicKey,
} from '@devicelab/shared';
import { AdbAccessEndpoints } from '../../src/access/adb-access-endpoints';
import { eventually } from '../support/eventually';

jest.setTimeout(60_000);

const SHA1_DIGEST_INFO = Buffer.from('3021300906052b0e03021a05000414', 'hex');
let world: LabWorld;
let endpoints: AdbAccessEndpoints;
let scratch: string;
let port: number;
let serial: string;
let adb: ReturnType<typeof Adb.createClient>;
const events: DeviceAccessEvent[] = [];
const closedEndpoints: AccessEndpoint[] = [];
const [spec] = defaultAndroidLab(1);

interface Key { pem: string; publicText: string }
function adbKey(name: string): Key {
  const file = path.join(scratch, name);
  execFileSync('adb', ['keygen', file], { stdio: 'ignore' });
  return { pem: readFileSync(file, 'utf8'), publicText: readFileSync(`${file}.pub`, 'utf8') };
}
let retainer: Key;
let stranger: Key;

/** A raw adb transport client: packets out, packets in, in order. */
class RawClient {
  readonly socket: net.Socket;
  private readonly reader = new AdbPacketReader(1 << 21);
  private readonly inbox: AdbPacket[] = [];
  private waiter: (() => void) | undefined;
  readonly closed: Promise<void>;

  constructor(to = port) {
    this.socket = net.connect(to, '127.0.0.1');
    this.socket.on('data', (chunk: Buffer) => {
      this.inbox.push(...this.reader.push(chunk));
      this.waiter?.();
    });
    this.closed = new Promise((resolve) => this.socket.once('close', () => resolve()));
    this.socket.on('error', () => undefined);
  }

  send(command: number, arg0: number, arg1: number, data = Buffer.alloc(0)): void {
    this.socket.write(Buffer.concat([adbPacketHeader(command, arg0, arg1, data, false), data]));
  }

  async next(): Promise<AdbPacket> {
    while (this.inbox.length === 0) {
      if (this.socket.destroyed) throw new Error('closed');
      await Promise.race([new Promise<void>((resolve) => { this.waiter = resolve; }), this.closed]);
    }
    return this.inbox.shift()!;
  }

  /** CNXN, then the AUTH token; signs it with `key`. */
  async authenticate(key: Key): Promise<AdbPacket> {
    this.send(A_CNXN, 0x01000001, 1 << 20, Buffer.from('host::features=shell_v2\0'));
    const token = await this.next();
    expect([token.command, token.arg0]).toEqual([A_AUTH, AUTH_TOKEN]);
    const signature = privateEncrypt({ key: createPrivateKey(key.pem), padding: constants.RSA_PKCS1_PADDING },
      Buffer.concat([SHA1_DIGEST_INFO, token.data]));
    this.send(A_AUTH, AUTH_SIGNATURE, 0, signature);
    return this.next();
  }
}

beforeAll(async () => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'devicelab-adb-endpoint-'));
  retainer = adbKey('retainer');
  stranger = adbKey('stranger');
  world = new LabWorld();
  await world.start();
  await world.addAndroidDevice(spec);
  adb = Adb.createClient({ port: world.adbServerPort });
  await eventually(async () => (await adb.listDevices()).some((d: { type: string }) => d.type === 'device'));
  const [device] = await adb.listDevices();
  endpoints = new AdbAccessEndpoints({
    adb, ports: { first: 17_640, last: 17_699 }, host: '127.0.0.1', logger: createLogger('test', 'silent'),
    ownsAndroidDevice: () => true, report: (event) => events.push(event), packagesChanged: () => undefined,
    endpointClosed: (endpoint) => closedEndpoints.push(endpoint),
  });
  serial = device.id;
  const parsed = parseAdbPublicKey(retainer.publicText);
  const answer = await endpoints.apply({
    vendorUniqueIdentifier: device.id, retainId: 'retain-1', userLogin: 'alice@lab.test',
    adbKeys: [{ key: parsed.struct, fingerprint: parsed.fingerprint, comment: parsed.comment }],
  });
  port = answer.port;
  expect(port).toBeGreaterThan(0);
});

afterAll(async () => {
  await endpoints?.stop();
  await world?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

test('the retainer\'s signature opens it: CNXN with the device banner and maxdata, then a shell stream to the device', async () => {
  const client = new RawClient();
  const connected = await client.authenticate(retainer);
  expect(connected.command).toBe(A_CNXN);
  expect(connected.arg1).toBe(1 << 20);
  // The device's own features (labsim's Pixel 7 announces shell_v2, cmd, stat_v2, ...), so the client uses them.
  expect(connected.data.toString()).toMatch(/^device::ro\.product\.name=[^;]+;ro\.product\.model=[^;]+;ro\.product\.device=[^;]+;features=\S*shell_v2\S*$/);

  client.send(A_OPEN, 5, 0, Buffer.from('shell:getprop ro.serialno\0'));
  const okay = await client.next();
  expect([okay.command, okay.arg1]).toEqual([A_OKAY, 5]);
  let text = '';
  for (;;) {
    const packet = await client.next();
    if (packet.command === A_CLSE) break;
    expect(packet.command).toBe(A_WRTE);
    text += packet.data.toString();
    client.send(A_OKAY, 5, okay.arg0);
  }
  expect(text.trim()).toBe(spec.serial);
  expect(events.at(-1)).toMatchObject({ accepted: true, userLogin: 'alice@lab.test', fingerprint: parseAdbPublicKey(retainer.publicText).fingerprint });
  client.socket.destroy();
});

test('another key is asked for the next one, its public key is refused and told, and the connection closed', async () => {
  const client = new RawClient();
  const again = await client.authenticate(stranger);
  expect([again.command, again.arg0]).toEqual([A_AUTH, AUTH_TOKEN]);
  client.send(A_AUTH, AUTH_RSAPUBLICKEY, 0, Buffer.from(`${stranger.publicText.trim()}\0`));
  await client.closed;
  const fingerprint = parseAdbPublicKey(stranger.publicText).fingerprint;
  await eventually(() => events.some((e) => !e.accepted && e.fingerprint === fingerprint));
  expect(events.find((e) => !e.accepted)?.message).toMatch(new RegExp(`^adb connection refused from 127\\.0\\.0\\.1:\\d+: key ${fingerprint} .*is not one of alice@lab\\.test's adb keys$`));

  // The same key again from the same host (an adb server reconnecting every second): refused, not told again.
  const retry = new RawClient();
  await retry.authenticate(stranger);
  retry.send(A_AUTH, AUTH_RSAPUBLICKEY, 0, Buffer.from(`${stranger.publicText.trim()}\0`));
  await retry.closed;
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(events.filter((e) => !e.accepted && e.fingerprint === fingerprint)).toHaveLength(1);
});

test('before AUTH: a stream is not opened, and a large packet is not buffered', async () => {
  const opener = new RawClient();
  opener.send(A_CNXN, 0x01000001, 1 << 20, Buffer.from('host::\0'));
  await opener.next();
  opener.send(A_OPEN, 1, 0, Buffer.from('shell:id\0'));
  await opener.closed;

  const big = new RawClient();
  big.socket.write(adbPacketHeader(A_CNXN, 0x01000001, 1 << 20, Buffer.alloc(1 << 20), false));
  await big.closed; // dropped at the header: more than a handshake ever needs
});

test('a client that sends WRTEs ahead of their OKAYs (as the hub tunnel\'s CLI does) is served in order: one OKAY each, the file whole', async () => {
  const client = new RawClient();
  expect((await client.authenticate(retainer)).command).toBe(A_CNXN);
  client.send(A_OPEN, 9, 0, Buffer.from('sync:\0'));
  const opened = await client.next();
  expect([opened.command, opened.arg1]).toEqual([A_OKAY, 9]);
  // An adb push as the sync protocol has it (SEND, DATA blocks of 64 KiB, DONE), cut into 1 MiB WRTEs sent at once.
  const content = randomBytes(3 * 1024 * 1024 + 777);
  const request = (id: string, arg: number, body = Buffer.alloc(0)) => {
    const head = Buffer.alloc(8);
    head.write(id, 0, 'latin1');
    head.writeUInt32LE(arg, 4);
    return Buffer.concat([head, body]);
  };
  const target = Buffer.from('/data/local/tmp/pipelined.bin,33188');
  const blocks = [request('SEND', target.length, target)];
  for (let at = 0; at < content.length; at += 64 * 1024) {
    const block = content.subarray(at, at + 64 * 1024);
    blocks.push(request('DATA', block.length, block));
  }
  blocks.push(request('DONE', 1_700_000_000));
  const sync = Buffer.concat(blocks);
  let writes = 0;
  for (let at = 0; at < sync.length; at += 1 << 20) {
    client.send(A_WRTE, 9, opened.arg0, sync.subarray(at, at + (1 << 20)));
    writes += 1;
  }
  let okays = 0;
  let answer = '';
  while (okays < writes || answer.length < 8) {
    const packet = await client.next();
    if (packet.command === A_OKAY) okays += 1;
    else if (packet.command === A_WRTE) {
      answer += packet.data.toString('latin1');
      client.send(A_OKAY, 9, opened.arg0);
    } else throw new Error(`unexpected packet 0x${packet.command.toString(16)}`);
  }
  expect(okays).toBe(writes);
  expect(answer.slice(0, 4)).toBe('OKAY');
  const pushed = readFileSync(world.device(spec.serial).hostPath('/data/local/tmp/pipelined.bin'));
  expect(pushed.equals(content)).toBe(true);
  client.socket.destroy();
});

/** The Retention of `key`'s holder. */
function retention(retainId: string, userLogin: string, key: Key) {
  const parsed = parseAdbPublicKey(key.publicText);
  return { vendorUniqueIdentifier: serial, retainId, userLogin,
    adbKeys: [{ key: parsed.struct, fingerprint: parsed.fingerprint, comment: parsed.comment }] };
}

test('a release keeps the port; a client is held until the hub answers its AccessSync, then checked against the retains before it', async () => {
  let hubAnswers!: () => void; // the hub's AccessSync answer, which comes behind the Retentions it sent before
  const synced = new Promise<void>((resolve) => { hubAnswers = resolve; });
  const held = new AdbAccessEndpoints({
    adb, ports: { first: 17_700, last: 17_709 }, host: '127.0.0.1', logger: createLogger('test', 'silent'),
    ownsAndroidDevice: () => true, report: (event) => events.push(event), packagesChanged: () => undefined, sync: () => synced,
  });
  try {
    const { port: kept } = await held.apply(retention('retain-1', 'alice@lab.test', retainer));
    expect(await held.apply({ vendorUniqueIdentifier: serial, retainId: '' })).toEqual({ vendorUniqueIdentifier: serial, retainId: '', port: kept });
    expect(held.portOf(serial)).toBeUndefined(); // no tunnel into a device nobody retains
    // Bob's retain returned (its ticket names the kept port) and he connects; so does Alice, whose retain ended.
    const bob = new RawClient(kept);
    const alice = new RawClient(kept);
    const bobAnswer = bob.authenticate(stranger);
    const aliceAnswer = alice.authenticate(retainer);
    let answered = false;
    void Promise.race([bobAnswer, aliceAnswer]).then(() => { answered = true; }, () => { answered = true; });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(answered).toBe(false); // held, unread: not even the AUTH token before the hub's answer
    expect((await held.apply(retention('retain-2', 'bob@lab.test', stranger))).port).toBe(kept);
    hubAnswers();
    expect((await bobAnswer).command).toBe(A_CNXN);
    const refused = await aliceAnswer;
    expect([refused.command, refused.arg0]).toEqual([A_AUTH, AUTH_TOKEN]); // her key opens nothing: asked for another
    alice.socket.destroy();
    // The next retainer: Bob's connection drops at once, the port stays.
    expect((await held.apply(retention('retain-3', 'alice@lab.test', retainer))).port).toBe(kept);
    await bob.closed;
    const again = new RawClient(kept);
    expect((await again.authenticate(retainer)).command).toBe(A_CNXN);
    again.socket.destroy();
  } finally {
    await held.stop();
  }
});

test('a device that leaves while nobody retains it gives its port back, and the hub is told', async () => {
  await endpoints.apply({ vendorUniqueIdentifier: serial, retainId: '' });
  endpoints.deviceGone(serial);
  expect(closedEndpoints).toEqual([{ vendorUniqueIdentifier: serial, retainId: '', port: 0 }]);
  const refused = new RawClient();
  await refused.closed; // nothing listens there any more
  endpoints.deviceReady(serial);
  const reopened = await endpoints.apply(retention('retain-4', 'alice@lab.test', retainer));
  expect(reopened.port).toBe(port); // its port again, as the hub may still name it
  const client = new RawClient();
  expect((await client.authenticate(retainer)).command).toBe(A_CNXN);
  client.socket.destroy();
});
