/**
 * Minimal zip reader: central directory lookup plus stored/deflated entry
 * extraction with node's zlib. Enough to pull AndroidManifest.xml out of an
 * APK; no zip64, no encryption (APKs never use either for the manifest).
 */
import { inflateRawSync } from 'node:zlib';

const EOCD_SIG = 0x06054b50;
const CDH_SIG = 0x02014b50;
const LFH_SIG = 0x04034b50;

export interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
}

export class ZipError extends Error {}

export class ZipReader {
  readonly entries: ZipEntry[];

  constructor(private readonly data: Buffer) {
    this.entries = readCentralDirectory(data);
  }

  find(name: string): ZipEntry | undefined {
    return this.entries.find((e) => e.name === name);
  }

  read(entry: ZipEntry): Buffer {
    const off = entry.localHeaderOffset;
    if (off + 30 > this.data.length || this.data.readUInt32LE(off) !== LFH_SIG) {
      throw new ZipError(`bad local header for ${entry.name}`);
    }
    // Sizes in the local header may be zero (data descriptor); the central directory is authoritative.
    const start = off + 30 + this.data.readUInt16LE(off + 26) + this.data.readUInt16LE(off + 28);
    const raw = this.data.subarray(start, start + entry.compressedSize);
    if (raw.length !== entry.compressedSize) throw new ZipError(`truncated entry ${entry.name}`);
    if (entry.method === 0) return Buffer.from(raw);
    if (entry.method === 8) return inflateRawSync(raw);
    throw new ZipError(`unsupported compression method ${entry.method} for ${entry.name}`);
  }
}

function readCentralDirectory(data: Buffer): ZipEntry[] {
  // The end-of-central-directory record sits in the last 22 + 65535 (comment) bytes.
  const lowest = Math.max(0, data.length - 22 - 0xffff);
  let eocd = -1;
  for (let i = data.length - 22; i >= lowest; i--) {
    if (data.readUInt32LE(i) === EOCD_SIG) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new ZipError('no end of central directory record');
  const count = data.readUInt16LE(eocd + 10);
  let off = data.readUInt32LE(eocd + 16);
  const entries: ZipEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (off + 46 > data.length || data.readUInt32LE(off) !== CDH_SIG) throw new ZipError('corrupt central directory');
    const nameLength = data.readUInt16LE(off + 28);
    entries.push({
      method: data.readUInt16LE(off + 10),
      compressedSize: data.readUInt32LE(off + 20),
      size: data.readUInt32LE(off + 24),
      localHeaderOffset: data.readUInt32LE(off + 42),
      name: data.toString('utf8', off + 46, off + 46 + nameLength),
    });
    off += 46 + nameLength + data.readUInt16LE(off + 30) + data.readUInt16LE(off + 32);
  }
  return entries;
}
