/**
 * The full integrity check of an uploaded archive, before anything else reads it: every entry's local header agrees
 * with the central directory, entries do not overlap, names are safe, and every entry's bytes inflate (streamed,
 * never buffered whole) to exactly its declared size with its declared CRC-32. The declared sizes are held to the
 * limits first, and inflation stops the moment an entry yields more than it declared, so a zip bomb costs at most
 * the limits, never its inflated size. Nested archives are checked as bytes like any entry, never expanded.
 */
import { createReadStream } from 'node:fs';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createInflateRaw, crc32, inflateRawSync } from 'node:zlib';
import { DATA_DESCRIPTOR_FLAG, ZipFormatError, type ZipEntry, type ZipReader } from './zip-reader';

export interface ZipLimits {
  /** Most entries in one archive. */
  maxEntries: number;
  /** Largest uncompressed size of one entry. */
  maxEntryBytes: number;
  /** Largest uncompressed size of all entries together. */
  maxTotalBytes: number;
  /** Largest uncompressed : compressed ratio of an entry larger than RATIO_FLOOR_BYTES. */
  maxCompressionRatio: number;
}

/** Small entries (an empty file, a run of zeros in a tiny resource) may compress far better than real data. */
const RATIO_FLOOR_BYTES = 1024 * 1024;
/** Entries this small (both sizes) are read and inflated in one go: streams cost more than the data. */
const BUFFERED_ENTRY_BYTES = 1024 * 1024;

export async function verifyZipIntegrity(zip: ZipReader, path: string, limits: ZipLimits): Promise<void> {
  if (zip.entries.length > limits.maxEntries) {
    throw new ZipFormatError(`the archive has ${zip.entries.length} entries, more than the limit of ${limits.maxEntries}`);
  }
  const names = new Set<string>();
  let total = 0;
  let compressed = 0;
  for (const entry of zip.entries) {
    checkName(entry.name);
    if (names.has(entry.name)) throw new ZipFormatError(`entry '${entry.name}' appears twice`);
    names.add(entry.name);
    checkDeclaredSizes(entry, limits);
    total += entry.size;
    compressed += entry.compressedSize;
    if (total > limits.maxTotalBytes) {
      throw new ZipFormatError(`the entries would inflate to more than the limit of ${limits.maxTotalBytes} bytes`);
    }
  }
  // Entries under the floor escape the ratio one by one; thousands of them together must not.
  if (total > RATIO_FLOOR_BYTES && total / Math.max(compressed, 1) > limits.maxCompressionRatio) {
    throw new ZipFormatError(`the entries together have a compression ratio above the limit of ${limits.maxCompressionRatio} (a zip bomb?)`);
  }
  let previousEnd = 0;
  for (const entry of [...zip.entries].sort((a, b) => a.localHeaderOffset - b.localHeaderOffset)) {
    if (entry.localHeaderOffset < previousEnd) throw new ZipFormatError(`entry '${entry.name}' overlaps another entry`);
    const data = await zip.locate(entry);
    previousEnd = data.end + (entry.flags & DATA_DESCRIPTOR_FLAG ? await descriptorLength(zip, entry, data.end) : 0);
    await verifyEntryData(zip, entry, path, data.start, data.end);
  }
}

/** No absolute paths, drive letters, backslashes, `..` segments or control characters. */
function checkName(name: string): void {
  const unsafe = name === '' || name.startsWith('/') || name.includes('\\') || /^[a-zA-Z]:/.test(name)
    || /[\u0000-\u001f]/.test(name) || name.split('/').some((segment) => segment === '..');
  if (unsafe) throw new ZipFormatError(`entry '${name.replace(/[\u0000-\u001f]/g, '?')}' has an unsafe name`);
}

function checkDeclaredSizes(entry: ZipEntry, limits: ZipLimits): void {
  const what = `entry '${entry.name}'`;
  if (entry.encrypted) throw new ZipFormatError(`${what} is encrypted`);
  if (entry.method !== 0 && entry.method !== 8) throw new ZipFormatError(`${what} uses compression method ${entry.method}`);
  if (entry.method === 0 && entry.compressedSize !== entry.size) {
    throw new ZipFormatError(`${what} is stored uncompressed but its two sizes differ`);
  }
  if (entry.size > limits.maxEntryBytes) {
    throw new ZipFormatError(`${what} would inflate to ${entry.size} bytes, more than the limit of ${limits.maxEntryBytes}`);
  }
  if (entry.size > RATIO_FLOOR_BYTES && entry.size / Math.max(entry.compressedSize, 1) > limits.maxCompressionRatio) {
    throw new ZipFormatError(`${what} has a compression ratio above the limit of ${limits.maxCompressionRatio} (a zip bomb?)`);
  }
}

/** The data descriptor after an entry's bytes (optional signature, CRC, sizes) must repeat the directory's CRC. */
async function descriptorLength(zip: ZipReader, entry: ZipEntry, at: number): Promise<number> {
  const head = await zip.readBytes(at, Math.min(16, zip.centralDirectoryOffset - at)).catch(() => Buffer.alloc(0));
  const signed = head.length >= 4 && head.readUInt32LE(0) === 0x08074b50;
  const crcAt = signed ? 4 : 0;
  if (head.length < crcAt + 4 || head.readUInt32LE(crcAt) !== entry.crc32) {
    throw new ZipFormatError(`entry '${entry.name}' has a data descriptor that disagrees with the central directory`);
  }
  return signed ? 16 : 12;
}

/** Inflates the entry, never to more than declared (+1 byte to notice a lie); CRC and size must match. */
async function verifyEntryData(zip: ZipReader, entry: ZipEntry, path: string, start: number, end: number): Promise<void> {
  const what = `entry '${entry.name}'`;
  if (entry.size <= BUFFERED_ENTRY_BYTES && end - start <= BUFFERED_ENTRY_BYTES) {
    const raw = await zip.readBytes(start, end - start);
    let data: Buffer;
    try {
      data = entry.method === 0 ? raw : inflateRawSync(raw, { maxOutputLength: entry.size + 1 });
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
        throw new ZipFormatError(`${what} inflates to more than its declared ${entry.size} bytes`);
      }
      throw new ZipFormatError(`${what} cannot be inflated (${(err as Error).message})`);
    }
    return checkInflated(entry, data.length, crc32(data));
  }
  let crc = 0;
  let produced = 0;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      produced += chunk.length;
      if (produced > entry.size) {
        callback(new ZipFormatError(`${what} inflates to more than its declared ${entry.size} bytes`));
        return;
      }
      crc = crc32(chunk, crc);
      callback();
    },
  });
  if (end > start) {
    const source = createReadStream(path, { start, end: end - 1, highWaterMark: 64 * 1024 });
    try {
      if (entry.method === 0) await pipeline(source, sink);
      else await pipeline(source, createInflateRaw(), sink);
    } catch (err) {
      if (err instanceof ZipFormatError) throw err;
      throw new ZipFormatError(`${what} cannot be inflated (${(err as Error).message})`);
    }
  } else if (entry.method === 8) {
    throw new ZipFormatError(`${what} has no compressed data`);
  }
  checkInflated(entry, produced, crc);
}

function checkInflated(entry: ZipEntry, produced: number, crc: number): void {
  const what = `entry '${entry.name}'`;
  if (produced > entry.size) throw new ZipFormatError(`${what} inflates to more than its declared ${entry.size} bytes`);
  if (produced !== entry.size) {
    throw new ZipFormatError(`${what} inflates to ${produced} bytes, not the ${entry.size} its header declares`);
  }
  if ((crc >>> 0) !== entry.crc32) throw new ZipFormatError(`${what} fails its CRC check`);
}
