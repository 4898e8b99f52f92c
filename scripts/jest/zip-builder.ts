/**
 * ZIP archives built byte by byte for tests in every package (real CRCs; deflated or stored entries), so that a
 * test can make the package or the broken archive it needs.
 */
import { crc32, deflateRawSync } from 'node:zlib';

export interface ZipInput { name: string; data: Buffer | string }

/** One entry at `offset`: its local header with name and data, and its central directory record with name. */
export function zipEntry(name: string, data: Buffer, offset: number, method: 'deflate' | 'store' = 'deflate'):
  { local: Buffer; central: Buffer } {
  const body = method === 'deflate' ? deflateRawSync(data) : data;
  const nameBytes = Buffer.from(name, 'utf8');
  const crc = crc32(data) >>> 0;
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(0x800, 6); // names are UTF-8
  local.writeUInt16LE(method === 'deflate' ? 8 : 0, 8);
  local.writeUInt32LE(crc, 14);
  local.writeUInt32LE(body.length, 18);
  local.writeUInt32LE(data.length, 22);
  local.writeUInt16LE(nameBytes.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(0x800, 8);
  central.writeUInt16LE(method === 'deflate' ? 8 : 0, 10);
  central.writeUInt32LE(crc, 16);
  central.writeUInt32LE(body.length, 20);
  central.writeUInt32LE(data.length, 24);
  central.writeUInt16LE(nameBytes.length, 28);
  central.writeUInt32LE(offset, 42);
  return { local: Buffer.concat([local, nameBytes, body]), central: Buffer.concat([central, nameBytes]) };
}

export function buildZip(entries: ZipInput[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const { local, central } = zipEntry(entry.name, Buffer.isBuffer(entry.data) ? entry.data : Buffer.from(entry.data, 'utf8'), offset);
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
