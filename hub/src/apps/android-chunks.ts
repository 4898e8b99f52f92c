/**
 * The chunk structure of Android's binary resource files (AndroidManifest.xml, resources.arsc), checked before
 * app-info-parser reads them. Its readers trust every size they find: a chunk of size 0 (or one whose size points
 * backwards) makes them loop forever, an element that claims more attributes than its chunk holds makes them read
 * far past it, and strings that overlap multiply the file. Every chunk must lie within its parent and move the
 * reader forwards; a string pool's offsets and strings and an element's attributes must lie within their chunk.
 */
export class AndroidChunkError extends Error {}

const XML = 0x0003;
const STRING_POOL = 0x0001;
const XML_START_ELEMENT = 0x0102;
const TABLE = 0x0002;
const TABLE_PACKAGE = 0x0200;
/** Chunk header, line number, comment; namespace, name, attribute start/size/count, id/class/style index. */
const START_ELEMENT_BYTES = 36;
const ATTRIBUTE_BYTES = 20;
/** Chunk header, string count, style count, flags, strings start, styles start. */
const STRING_POOL_HEADER_BYTES = 28;
/** Offset of `keyStrings` in a package chunk: header, id, 128 UTF-16 name units, typeStrings, lastPublicType. */
const PACKAGE_KEY_STRINGS_AT = 8 + 4 + 256 + 4 + 4;

interface Chunk { type: number; at: number; headerSize: number; size: number }

/** AndroidManifest.xml: the XML chunk, then chunks up to the end of the file (app-info-parser reads that far). */
export function checkBinaryXml(bytes: Buffer): void {
  const root = chunkAt(bytes, 0, bytes.length);
  if (root.type !== XML) throw new AndroidChunkError('it is not an Android binary XML file');
  for (const chunk of chunksIn(bytes, 8, bytes.length)) {
    if (chunk.type === STRING_POOL) checkStringPool(bytes, chunk);
    if (chunk.type === XML_START_ELEMENT) {
      if (chunk.size < START_ELEMENT_BYTES) throw bad(chunk, 'is shorter than an element');
      const attributes = bytes.readUInt16LE(chunk.at + 28);
      if (START_ELEMENT_BYTES + attributes * ATTRIBUTE_BYTES > chunk.size) throw bad(chunk, 'claims more attributes than it holds');
    }
  }
}

/** resources.arsc: the table's chunks, and within each package the chunks after its key strings. */
export function checkResourceTable(bytes: Buffer): void {
  const root = chunkAt(bytes, 0, bytes.length);
  if (root.type !== TABLE || root.size !== bytes.length) throw new AndroidChunkError('it is not an Android resource table');
  for (const chunk of chunksIn(bytes, root.headerSize, bytes.length)) {
    if (chunk.type === STRING_POOL) checkStringPool(bytes, chunk);
    if (chunk.type !== TABLE_PACKAGE) continue;
    const end = chunk.at + chunk.size;
    if (chunk.size < PACKAGE_KEY_STRINGS_AT + 4) throw bad(chunk, 'is shorter than a package header');
    const keyStrings = chunkAt(bytes, chunk.at + bytes.readUInt32LE(chunk.at + PACKAGE_KEY_STRINGS_AT), end);
    checkStringPool(bytes, keyStrings);
    for (const inner of chunksIn(bytes, keyStrings.at + keyStrings.size, end)) {
      if (inner.type === STRING_POOL) checkStringPool(bytes, inner);
    }
  }
}

function chunkAt(bytes: Buffer, at: number, end: number): Chunk {
  if (at + 8 > end) throw new AndroidChunkError(`a chunk header at offset ${at} is cut off`);
  const chunk = { type: bytes.readUInt16LE(at), at, headerSize: bytes.readUInt16LE(at + 2), size: bytes.readUInt32LE(at + 4) };
  if (chunk.headerSize < 8 || chunk.size < chunk.headerSize || at + chunk.size > end) throw bad(chunk, 'has an impossible size');
  return chunk;
}

function* chunksIn(bytes: Buffer, start: number, end: number): Generator<Chunk> {
  for (let at = start; at < end;) {
    const chunk = chunkAt(bytes, at, end);
    yield chunk;
    at += chunk.size;
  }
}

/** Offsets and strings within the pool, and no more string bytes than the pool holds (no overlapping strings). */
function checkStringPool(bytes: Buffer, pool: Chunk): void {
  if (pool.size < STRING_POOL_HEADER_BYTES) throw bad(pool, 'is shorter than a string pool header');
  const count = bytes.readUInt32LE(pool.at + 8);
  const utf8 = (bytes.readUInt32LE(pool.at + 16) & 0x100) !== 0;
  const stringsAt = pool.at + bytes.readUInt32LE(pool.at + 20);
  const end = pool.at + pool.size;
  if (count > (pool.size - STRING_POOL_HEADER_BYTES) / 4) throw bad(pool, 'claims more strings than it holds');
  let total = 0;
  for (let i = 0; i < count; i++) {
    const at = stringsAt + bytes.readUInt32LE(pool.at + STRING_POOL_HEADER_BYTES + i * 4);
    const length = utf8 ? utf8StringBytes(bytes, at, end) : utf16StringBytes(bytes, at, end);
    total += length;
    if (at + length > end || total > pool.size) throw bad(pool, 'has strings outside it or overlapping');
  }
}

/** UTF-8 pool entry: character count and byte count (one or two bytes each), then the bytes. */
function utf8StringBytes(bytes: Buffer, at: number, end: number): number {
  let p = at;
  const length = (): number => {
    if (p + 2 > end) throw new AndroidChunkError('a string length lies outside its pool');
    const first = bytes[p++];
    return first & 0x80 ? ((first & 0x7f) << 8) | bytes[p++] : first;
  };
  length(); // characters
  const byteCount = length();
  return p - at + byteCount;
}

/** UTF-16 pool entry: unit count (one or two 16-bit words), then two bytes a unit. */
function utf16StringBytes(bytes: Buffer, at: number, end: number): number {
  if (at + 4 > end) throw new AndroidChunkError('a string length lies outside its pool');
  const first = bytes.readUInt16LE(at);
  if (!(first & 0x8000)) return 2 + first * 2;
  return 4 + (((first & 0x7fff) << 16) | bytes.readUInt16LE(at + 2)) * 2;
}

const bad = (chunk: Chunk, what: string): AndroidChunkError =>
  new AndroidChunkError(`the chunk of type 0x${chunk.type.toString(16)} at offset ${chunk.at} ${what}`);
