/**
 * ZIP archives built byte by byte for tests in every package (real CRCs; deflated or stored entries), so that a
 * test can make the package or the broken archive it needs.
 */
import { crc32, deflateRawSync } from 'node:zlib';

export interface ZipInput { name: string; data: Buffer | string }

/** An entry whose body is already compressed (a bomb is never inflated here): its CRC and size are of the inflated data. */
export interface RawZipEntry { name: string; body: Buffer; crc: number; size: number; method: 'deflate' | 'store' }

function entryRecords(entry: RawZipEntry, offset: number): { local: Buffer; central: Buffer } {
  const name = Buffer.from(entry.name, 'utf8');
  const method = entry.method === 'deflate' ? 8 : 0;
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(0x800, 6); // names are UTF-8
  local.writeUInt16LE(method, 8);
  local.writeUInt32LE(entry.crc, 14);
  local.writeUInt32LE(entry.body.length, 18);
  local.writeUInt32LE(entry.size, 22);
  local.writeUInt16LE(name.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(0x800, 8);
  central.writeUInt16LE(method, 10);
  central.writeUInt32LE(entry.crc, 16);
  central.writeUInt32LE(entry.body.length, 20);
  central.writeUInt32LE(entry.size, 24);
  central.writeUInt16LE(name.length, 28);
  central.writeUInt32LE(offset, 42);
  return { local: Buffer.concat([local, name, entry.body]), central: Buffer.concat([central, name]) };
}

const rawEntry = (name: string, data: Buffer, method: RawZipEntry['method']): RawZipEntry =>
  ({ name, body: method === 'deflate' ? deflateRawSync(data) : data, crc: crc32(data) >>> 0, size: data.length, method });

/** One entry at `offset`: its local header with name and data, and its central directory record with name. */
export function zipEntry(name: string, data: Buffer, offset: number, method: 'deflate' | 'store' = 'deflate'):
  { local: Buffer; central: Buffer } {
  return entryRecords(rawEntry(name, data, method), offset);
}

export function buildRawZip(entries: RawZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const { local, central } = entryRecords(entry, offset);
    locals.push(local);
    centrals.push(central);
    offset += local.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

export function buildZip(entries: ZipInput[]): Buffer {
  return buildRawZip(entries.map((e) =>
    rawEntry(e.name, Buffer.isBuffer(e.data) ? e.data : Buffer.from(e.data, 'utf8'), 'deflate')));
}
