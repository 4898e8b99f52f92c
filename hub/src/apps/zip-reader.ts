/**
 * Reading single entries of a ZIP archive (an IPA) straight from disk: the central directory is parsed once, an
 * entry's bytes are read and inflated on demand. Zip64 archives are understood; encrypted entries are refused.
 * Every malformation is a ZipFormatError, which the caller turns into a clear upload failure.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { inflateRawSync } from 'node:zlib';

export class ZipFormatError extends Error {}

export interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
  encrypted: boolean;
}

const EOCD = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const ZIP64_EOCD = 0x06064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

export class ZipReader {
  private constructor(private readonly file: FileHandle, readonly entries: ZipEntry[]) {}

  static async open(path: string): Promise<ZipReader> {
    const file = await open(path, 'r');
    try {
      const entries = await readCentralDirectory(file);
      return new ZipReader(file, entries);
    } catch (err) {
      await file.close();
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.file.close();
  }

  find(name: string): ZipEntry | undefined {
    return this.entries.find((e) => e.name === name);
  }

  /** The entry's uncompressed bytes; refuses entries larger than `maxBytes` (zip bombs, absurd sizes). */
  async read(entry: ZipEntry, maxBytes: number): Promise<Buffer> {
    if (entry.encrypted) throw new ZipFormatError(`entry '${entry.name}' is encrypted`);
    if (entry.size > maxBytes) throw new ZipFormatError(`entry '${entry.name}' is larger than ${maxBytes} bytes`);
    const header = await readAt(this.file, entry.localHeaderOffset, 30);
    if (header.readUInt32LE(0) !== LOCAL) throw new ZipFormatError(`bad local header for '${entry.name}'`);
    const dataStart = entry.localHeaderOffset + 30 + header.readUInt16LE(26) + header.readUInt16LE(28);
    const raw = await readAt(this.file, dataStart, entry.compressedSize);
    if (entry.method === 0) return raw;
    if (entry.method !== 8) throw new ZipFormatError(`entry '${entry.name}' uses compression method ${entry.method}`);
    try {
      return inflateRawSync(raw, { maxOutputLength: Math.max(maxBytes, 1) });
    } catch (err) {
      throw new ZipFormatError(`entry '${entry.name}' cannot be inflated: ${(err as Error).message}`);
    }
  }
}

async function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await file.read(buffer, 0, length, position);
  if (bytesRead !== length) throw new ZipFormatError('archive is truncated');
  return buffer;
}

async function readCentralDirectory(file: FileHandle): Promise<ZipEntry[]> {
  const { size } = await file.stat();
  if (size < 22) throw new ZipFormatError('not a ZIP archive');
  const tailLength = Math.min(size, 22 + 0xffff);
  const tail = await readAt(file, size - tailLength, tailLength);
  let eocd = -1;
  for (let i = tail.length - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) === EOCD) { eocd = i; break; }
  }
  if (eocd < 0) throw new ZipFormatError('not a ZIP archive');
  let count = tail.readUInt16LE(eocd + 10);
  let cdSize = tail.readUInt32LE(eocd + 12);
  let cdOffset = tail.readUInt32LE(eocd + 16);
  if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
    const locatorAt = eocd - 20;
    if (locatorAt < 0 || tail.readUInt32LE(locatorAt) !== ZIP64_LOCATOR) throw new ZipFormatError('bad Zip64 locator');
    const record = await readAt(file, Number(tail.readBigUInt64LE(locatorAt + 8)), 56);
    if (record.readUInt32LE(0) !== ZIP64_EOCD) throw new ZipFormatError('bad Zip64 end record');
    count = Number(record.readBigUInt64LE(32));
    cdSize = Number(record.readBigUInt64LE(40));
    cdOffset = Number(record.readBigUInt64LE(48));
  }
  if (cdOffset + cdSize > size) throw new ZipFormatError('central directory lies outside the file');
  const cd = await readAt(file, cdOffset, cdSize);
  const entries: ZipEntry[] = [];
  let p = 0;
  for (let i = 0; i < count; i++) {
    if (p + 46 > cd.length || cd.readUInt32LE(p) !== CENTRAL) throw new ZipFormatError('bad central directory');
    const flags = cd.readUInt16LE(p + 8);
    const nameLength = cd.readUInt16LE(p + 28);
    const extraLength = cd.readUInt16LE(p + 30);
    const commentLength = cd.readUInt16LE(p + 32);
    const nameBytes = cd.subarray(p + 46, p + 46 + nameLength);
    const entry: ZipEntry = {
      name: nameBytes.toString(flags & 0x800 ? 'utf8' : 'latin1'),
      method: cd.readUInt16LE(p + 10),
      compressedSize: cd.readUInt32LE(p + 20),
      size: cd.readUInt32LE(p + 24),
      localHeaderOffset: cd.readUInt32LE(p + 42),
      encrypted: (flags & 1) === 1,
    };
    applyZip64Extra(entry, cd.subarray(p + 46 + nameLength, p + 46 + nameLength + extraLength));
    entries.push(entry);
    p += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** Zip64 extended information (header id 1): the 64-bit values of the fields saturated at 0xffffffff, in order. */
function applyZip64Extra(entry: ZipEntry, extra: Buffer): void {
  for (let p = 0; p + 4 <= extra.length;) {
    const id = extra.readUInt16LE(p);
    const length = extra.readUInt16LE(p + 2);
    if (id === 1) {
      let q = p + 4;
      const next = (): number => {
        if (q + 8 > p + 4 + length) throw new ZipFormatError('bad Zip64 extra field');
        const value = Number(extra.readBigUInt64LE(q));
        q += 8;
        return value;
      };
      if (entry.size === 0xffffffff) entry.size = next();
      if (entry.compressedSize === 0xffffffff) entry.compressedSize = next();
      if (entry.localHeaderOffset === 0xffffffff) entry.localHeaderOffset = next();
    }
    p += 4 + length;
  }
}
