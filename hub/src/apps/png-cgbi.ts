/**
 * Apple's "crushed" PNGs (Xcode pngcrush with the iPhone option): a `CgBI` chunk before IHDR, pixel rows stored
 * as BGRA with premultiplied alpha, IDAT compressed as raw deflate (no zlib header). Browsers cannot show them.
 * `uncrushPng` turns one into a standard RGBA PNG; a normal PNG is returned unchanged.
 */
import { crc32, deflateSync, inflateRawSync } from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** Icons are small; anything claiming more is refused rather than inflated. */
const MAX_PIXELS = 4096 * 4096;

class PngFormatError extends Error {}

interface Chunk { type: string; data: Buffer }

export function isPng(bytes: Buffer): boolean {
  return bytes.length >= 8 && bytes.subarray(0, 8).equals(SIGNATURE);
}

/** The chunks up to IEND, not decoded; a truncated chunk is an error. */
export function pngChunks(bytes: Buffer): Chunk[] {
  if (!isPng(bytes)) throw new PngFormatError('not a PNG file');
  const chunks: Chunk[] = [];
  for (let p = 8; p + 12 <= bytes.length;) {
    const length = bytes.readUInt32BE(p);
    const type = bytes.subarray(p + 4, p + 8).toString('latin1');
    if (p + 12 + length > bytes.length) throw new PngFormatError(`chunk ${type} is truncated`);
    chunks.push({ type, data: bytes.subarray(p + 8, p + 8 + length) });
    p += 12 + length;
    if (type === 'IEND') break;
  }
  return chunks;
}

function writeChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

export function isCrushedPng(bytes: Buffer): boolean {
  return isPng(bytes) && bytes.length >= 16 && bytes.subarray(12, 16).toString('latin1') === 'CgBI';
}

export function uncrushPng(bytes: Buffer): Buffer {
  if (!isCrushedPng(bytes)) {
    if (!isPng(bytes)) throw new PngFormatError('not a PNG file');
    return bytes;
  }
  const chunks = pngChunks(bytes);
  const ihdr = chunks.find((c) => c.type === 'IHDR');
  if (!ihdr || ihdr.data.length !== 13) throw new PngFormatError('missing IHDR');
  const width = ihdr.data.readUInt32BE(0);
  const height = ihdr.data.readUInt32BE(4);
  const bitDepth = ihdr.data[8];
  const colorType = ihdr.data[9];
  const interlace = ihdr.data[12];
  // Xcode writes 8-bit RGBA (colour type 6) or RGB (2), never interlaced.
  if (bitDepth !== 8 || (colorType !== 6 && colorType !== 2) || interlace !== 0) {
    throw new PngFormatError(`unsupported crushed PNG (depth ${bitDepth}, colour type ${colorType}, interlace ${interlace})`);
  }
  if (width === 0 || height === 0 || width * height > MAX_PIXELS) throw new PngFormatError('unsupported image size');
  const bpp = colorType === 6 ? 4 : 3;
  const stride = width * bpp;
  const compressed = Buffer.concat(chunks.filter((c) => c.type === 'IDAT').map((c) => c.data));
  let raw: Buffer;
  try {
    raw = inflateRawSync(compressed, { maxOutputLength: (stride + 1) * height });
  } catch (err) {
    throw new PngFormatError(`cannot inflate pixel data: ${(err as Error).message}`);
  }
  if (raw.length < (stride + 1) * height) throw new PngFormatError('pixel data is truncated');
  const pixels = unfilter(raw, stride, height, bpp);
  for (let p = 0; p < pixels.length; p += bpp) {
    const b = pixels[p];
    pixels[p] = pixels[p + 2];
    pixels[p + 2] = b;
    if (bpp === 4) {
      const a = pixels[p + 3];
      if (a !== 0 && a !== 255) {
        // Undo premultiplication: c = c * 255 / a, rounded, capped.
        for (let k = 0; k < 3; k++) pixels[p + k] = Math.min(255, Math.round((pixels[p + k] * 255) / a));
      }
    }
  }
  const filtered = Buffer.alloc((stride + 1) * height);
  for (let y = 0; y < height; y++) pixels.copy(filtered, y * (stride + 1) + 1, y * stride, (y + 1) * stride);
  const kept = chunks.filter((c) => !['CgBI', 'IHDR', 'IDAT', 'IEND', 'iDOT'].includes(c.type));
  return Buffer.concat([
    SIGNATURE,
    writeChunk('IHDR', ihdr.data),
    ...kept.map((c) => writeChunk(c.type, c.data)),
    writeChunk('IDAT', deflateSync(filtered)),
    writeChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** Reverses PNG row filters (None, Sub, Up, Average, Paeth) into plain pixel rows. */
function unfilter(raw: Buffer, stride: number, height: number, bpp: number): Buffer {
  const out = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const src = y * (stride + 1) + 1;
    const row = y * stride;
    const prev = row - stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= bpp ? out[row + x - bpp] : 0;
      const b = y > 0 ? out[prev + x] : 0;
      const c = x >= bpp && y > 0 ? out[prev + x - bpp] : 0;
      let predictor: number;
      switch (filter) {
        case 0: predictor = 0; break;
        case 1: predictor = a; break;
        case 2: predictor = b; break;
        case 3: predictor = (a + b) >> 1; break;
        case 4: {
          const p = a + b - c;
          const pa = Math.abs(p - a);
          const pb = Math.abs(p - b);
          const pc = Math.abs(p - c);
          predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default: throw new PngFormatError(`unknown row filter ${filter}`);
      }
      out[row + x] = (raw[src + x] + predictor) & 0xff;
    }
  }
  return out;
}

/** Width of a PNG from its IHDR (for choosing the largest icon); 0 when it cannot be read. */
export function pngWidth(bytes: Buffer): number {
  try {
    const ihdr = pngChunks(bytes).find((c) => c.type === 'IHDR');
    return ihdr && ihdr.data.length >= 4 ? ihdr.data.readUInt32BE(0) : 0;
  } catch {
    return 0;
  }
}
