/**
 * The adb packet reader used by the gateway's adb endpoint and labsim's adbd: packets come out whole however
 * TCP slices them, and a corrupt or oversized header is an error before any payload is buffered for it.
 */
import { A_CNXN, A_WRTE, AdbPacketError, AdbPacketReader, adbChecksum, adbPacketHeader } from '../src/adb-packets';

function packet(command: number, arg0: number, arg1: number, data: Buffer, check = true): Buffer {
  return Buffer.concat([adbPacketHeader(command, arg0, arg1, data, check), data]);
}

test('packets split at every byte, and several in one chunk, come out whole and in order', () => {
  const payload = Buffer.from(Array.from({ length: 70_000 }, (_, i) => i % 251));
  const stream = Buffer.concat([packet(A_CNXN, 0x01000001, 1 << 20, Buffer.from('host::\0')), packet(A_WRTE, 3, 7, payload, false),
    packet(A_WRTE, 3, 7, Buffer.alloc(0))]);
  for (const size of [1, 7, 24, 4096, stream.length]) {
    const reader = new AdbPacketReader(1 << 20);
    const out = [];
    for (let offset = 0; offset < stream.length; offset += size) out.push(...reader.push(stream.subarray(offset, offset + size)));
    expect(out.map((p) => [p.command, p.arg0, p.arg1, p.data.length])).toEqual([
      [A_CNXN, 0x01000001, 1 << 20, 7], [A_WRTE, 3, 7, 70_000], [A_WRTE, 3, 7, 0]]);
    expect(out[1].data.equals(payload)).toBe(true);
  }
});

test('a header announcing more than the limit, a wrong magic or a wrong check is refused', () => {
  expect(() => new AdbPacketReader(1024).push(adbPacketHeader(A_WRTE, 1, 2, Buffer.alloc(4096), false)))
    .toThrow(AdbPacketError);
  const badMagic = packet(A_WRTE, 1, 2, Buffer.from('x'));
  badMagic.writeUInt32LE(0, 20);
  expect(() => new AdbPacketReader(1024).push(badMagic)).toThrow(/bad magic/);
  const badCheck = packet(A_WRTE, 1, 2, Buffer.from('abc'));
  badCheck.writeUInt32LE(adbChecksum(Buffer.from('abc')) + 1, 16);
  expect(() => new AdbPacketReader(1024).push(badCheck)).toThrow(/bad data check/);
});

test('a reader with wholeWrites false gives WRTE payloads as the slices they came in, checked, and joins them on demand', () => {
  const payload = Buffer.from(Array.from({ length: 70_000 }, (_, i) => i % 251));
  const stream = Buffer.concat([packet(A_CNXN, 0x01000001, 1 << 20, Buffer.from('host::\0')), packet(A_WRTE, 3, 7, payload, true)]);
  for (const size of [1, 4096, 65_536, stream.length]) {
    const reader = new AdbPacketReader(1 << 20, false);
    const out = [];
    for (let offset = 0; offset < stream.length; offset += size) out.push(...reader.push(stream.subarray(offset, offset + size)));
    expect(out[0].pieces).toBeUndefined(); // only WRTEs come in pieces
    expect(out[0].data.toString()).toBe('host::\0');
    const pieces = out[1].pieces!;
    const start = stream.length - payload.length; // one slice per chunk the payload spans, none copied
    expect(pieces.length).toBe(Math.floor((stream.length - 1) / size) - Math.floor(start / size) + 1);
    expect(Buffer.concat(pieces).equals(payload)).toBe(true);
    expect(out[1].data.equals(payload)).toBe(true);
  }
  const badCheck = packet(A_WRTE, 1, 2, Buffer.from('abc'));
  badCheck.writeUInt32LE(adbChecksum(Buffer.from('abc')) + 1, 16);
  expect(() => new AdbPacketReader(1024, false).push(badCheck)).toThrow(/bad data check/);
});
