/**
 * Reading a ZIP archive (an APK or IPA) straight from disk: the central directory is parsed once, strictly (the end
 * record, the directory and its entry count must agree), an entry's bytes are read and inflated on demand. Zip64
 * archives are understood; encrypted entries are refused. Every malformation is a ZipFormatError whose text says
 * what is wrong (`entry 'x' fails its CRC check`), which the caller turns into a clear upload failure. The full
 * check of every entry's bytes is `verifyZipIntegrity` (zip-integrity.ts).
 */
import { open, type FileHandle } from 'node:fs/promises';
import { inflateRawSync } from 'node:zlib';

export class ZipFormatError extends Error {}

export interface ZipEntry {
  name: string;
  /** The name as stored, to compare with the local header's copy. */
  nameBytes: Buffer;
  method: number;
  flags: number;
  crc32: number;
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
  encrypted: boolean;
}

/** Where an entry's compressed bytes are, from its local header. */
interface EntryData { start: number; end: number }

const EOCD = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const ZIP64_EOCD = 0x06064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const CENTRAL_HEADER_BYTES = 46;
const LOCAL_HEADER_BYTES = 30;
/** Bit 3: CRC and sizes follow the data (a data descriptor); the local header may carry zeros. */
export const DATA_DESCRIPTOR_FLAG = 0x8;

export class ZipReader {
  private constructor(
    private readonly file: FileHandle, readonly entries: ZipEntry[], readonly fileSize: number,
    /** Offset of the central directory: every entry's data lies before it. */
    readonly centralDirectoryOffset: number,
  ) {}

  /** Opens and reads the central directory; more than `maxEntries` entries is a ZipFormatError. */
  static async open(path: string, options: { maxEntries?: number } = {}): Promise<ZipReader> {
    const file = await open(path, 'r');
    try {
      const { size } = await file.stat();
      const { entries, cdOffset } = await readCentralDirectory(file, size, options.maxEntries ?? 1_000_000);
      return new ZipReader(file, entries, size, cdOffset);
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

  /** Checks the entry's local header against the central directory and locates its compressed bytes. */
  async locate(entry: ZipEntry): Promise<EntryData> {
    const what = `entry '${entry.name}'`;
    if (entry.localHeaderOffset + LOCAL_HEADER_BYTES > this.centralDirectoryOffset) {
      throw new ZipFormatError(`${what} lies outside the archive's data`);
    }
    // The header and the name in one read: the name must be as long as the directory's copy.
    const headerAndName = await readAt(this.file, entry.localHeaderOffset,
      Math.min(LOCAL_HEADER_BYTES + entry.nameBytes.length, this.centralDirectoryOffset - entry.localHeaderOffset));
    const header = headerAndName.subarray(0, LOCAL_HEADER_BYTES);
    if (header.readUInt32LE(0) !== LOCAL) throw new ZipFormatError(`${what} has no local header where the directory says`);
    const nameLength = header.readUInt16LE(26);
    const start = entry.localHeaderOffset + LOCAL_HEADER_BYTES + nameLength + header.readUInt16LE(28);
    const end = start + entry.compressedSize;
    if (end > this.centralDirectoryOffset) throw new ZipFormatError(`${what} is larger than the archive holds (truncated?)`);
    const localName = headerAndName.subarray(LOCAL_HEADER_BYTES);
    const flags = header.readUInt16LE(6);
    if (nameLength !== entry.nameBytes.length || !localName.equals(entry.nameBytes)) throw new ZipFormatError(`${what} has another name in its local header`);
    if (header.readUInt16LE(8) !== entry.method || (flags & 1) !== (entry.flags & 1)) {
      throw new ZipFormatError(`${what}: local header and central directory disagree`);
    }
    if (!(flags & DATA_DESCRIPTOR_FLAG)) {
      const localCompressed = header.readUInt32LE(18);
      const localSize = header.readUInt32LE(22);
      const sizesAgree = (local: number, central: number) => local === central || (local === 0xffffffff && central >= local);
      if (header.readUInt32LE(14) !== entry.crc32 || !sizesAgree(localCompressed, entry.compressedSize)
        || !sizesAgree(localSize, entry.size)) {
        throw new ZipFormatError(`${what}: the sizes or CRC in its local header and in the central directory disagree`);
      }
    }
    return { start, end };
  }

  /** `length` bytes at `position`; a ZipFormatError when the file ends first. */
  readBytes(position: number, length: number): Promise<Buffer> {
    return readAt(this.file, position, length);
  }

  /** The entry's uncompressed bytes; refuses entries larger than `maxBytes` (zip bombs, absurd sizes). */
  async read(entry: ZipEntry, maxBytes: number): Promise<Buffer> {
    if (entry.encrypted) throw new ZipFormatError(`entry '${entry.name}' is encrypted`);
    if (entry.size > maxBytes) throw new ZipFormatError(`entry '${entry.name}' is larger than ${maxBytes} bytes`);
    const { start, end } = await this.locate(entry);
    const raw = await readAt(this.file, start, end - start);
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
  if (bytesRead !== length) throw new ZipFormatError('the archive is truncated');
  return buffer;
}

async function readCentralDirectory(
  file: FileHandle, size: number, maxEntries: number,
): Promise<{ entries: ZipEntry[]; cdOffset: number }> {
  if (size < 22) throw new ZipFormatError('not a ZIP archive');
  const tailLength = Math.min(size, 22 + 0xffff);
  const tailStart = size - tailLength;
  const tail = await readAt(file, tailStart, tailLength);
  // The end record is the last signature whose comment length reaches exactly to the end of the file.
  let eocd = -1;
  for (let i = tail.length - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) === EOCD && i + 22 + tail.readUInt16LE(i + 20) === tail.length) { eocd = i; break; }
  }
  if (eocd < 0) throw new ZipFormatError('not a ZIP archive (no end of central directory record; truncated?)');
  let count = tail.readUInt16LE(eocd + 10);
  let cdSize = tail.readUInt32LE(eocd + 12);
  let cdOffset = tail.readUInt32LE(eocd + 16);
  let directoryEnd = tailStart + eocd; // where the central directory must end
  if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
    const locatorAt = eocd - 20;
    if (locatorAt < 0 || tail.readUInt32LE(locatorAt) !== ZIP64_LOCATOR) throw new ZipFormatError('bad Zip64 locator');
    const recordAt = Number(tail.readBigUInt64LE(locatorAt + 8));
    if (recordAt + 56 > tailStart + locatorAt) throw new ZipFormatError('bad Zip64 end record');
    const record = await readAt(file, recordAt, 56);
    if (record.readUInt32LE(0) !== ZIP64_EOCD) throw new ZipFormatError('bad Zip64 end record');
    if (record.readUInt32LE(16) !== 0 || record.readUInt32LE(20) !== 0
      || record.readBigUInt64LE(24) !== record.readBigUInt64LE(32)) {
      throw new ZipFormatError('multi-disk archives are not supported');
    }
    count = Number(record.readBigUInt64LE(32));
    cdSize = Number(record.readBigUInt64LE(40));
    cdOffset = Number(record.readBigUInt64LE(48));
    directoryEnd = recordAt;
  } else if (tail.readUInt16LE(eocd + 4) !== 0 || tail.readUInt16LE(eocd + 6) !== 0
    || tail.readUInt16LE(eocd + 8) !== count) {
    throw new ZipFormatError('multi-disk archives are not supported');
  }
  if (count > maxEntries) throw new ZipFormatError(`the archive has ${count} entries, more than the limit of ${maxEntries}`);
  if (cdOffset + cdSize !== directoryEnd) {
    throw new ZipFormatError('the central directory is not where the end record says (truncated or wrong sizes)');
  }
  if (cdSize < count * CENTRAL_HEADER_BYTES) throw new ZipFormatError('the central directory is shorter than its entry count');
  const cd = await readAt(file, cdOffset, cdSize);
  const entries: ZipEntry[] = [];
  let p = 0;
  for (let i = 0; i < count; i++) {
    if (p + CENTRAL_HEADER_BYTES > cd.length || cd.readUInt32LE(p) !== CENTRAL) {
      throw new ZipFormatError(`bad central directory (entry ${i + 1} of ${count})`);
    }
    const flags = cd.readUInt16LE(p + 8);
    const nameLength = cd.readUInt16LE(p + 28);
    const extraLength = cd.readUInt16LE(p + 30);
    const commentLength = cd.readUInt16LE(p + 32);
    const next = p + CENTRAL_HEADER_BYTES + nameLength + extraLength + commentLength;
    if (next > cd.length) throw new ZipFormatError(`bad central directory (entry ${i + 1} of ${count})`);
    const nameBytes = Buffer.from(cd.subarray(p + CENTRAL_HEADER_BYTES, p + CENTRAL_HEADER_BYTES + nameLength));
    const entry: ZipEntry = {
      name: nameBytes.toString(flags & 0x800 ? 'utf8' : 'latin1'),
      nameBytes,
      method: cd.readUInt16LE(p + 10),
      flags,
      crc32: cd.readUInt32LE(p + 16),
      compressedSize: cd.readUInt32LE(p + 20),
      size: cd.readUInt32LE(p + 24),
      localHeaderOffset: cd.readUInt32LE(p + 42),
      encrypted: (flags & 1) === 1,
    };
    const extraStart = p + CENTRAL_HEADER_BYTES + nameLength;
    applyZip64Extra(entry, cd.subarray(extraStart, extraStart + extraLength));
    entries.push(entry);
    p = next;
  }
  if (p !== cd.length) throw new ZipFormatError('the central directory holds more than its entry count says');
  return { entries, cdOffset };
}

/** Zip64 extended information (header id 1): the 64-bit values of the fields saturated at 0xffffffff, in order. */
function applyZip64Extra(entry: ZipEntry, extra: Buffer): void {
  for (let p = 0; p + 4 <= extra.length;) {
    const id = extra.readUInt16LE(p);
    const length = extra.readUInt16LE(p + 2);
    if (id === 1) {
      let q = p + 4;
      const next = (): number => {
        if (q + 8 > p + 4 + length || q + 8 > extra.length) throw new ZipFormatError('bad Zip64 extra field');
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
