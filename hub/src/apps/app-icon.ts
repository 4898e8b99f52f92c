/**
 * The icon kept in an Application record. Every list answer carries it (`GET /Application`, a device's
 * installedApplications), so it must stay small whatever the package holds: a PNG is decoded (Apple's crushed
 * form converted first), scaled down to at most ICON_MAX_SIDE pixels a side and written anew as a plain PNG of at
 * most ICON_MAX_BYTES; a WebP (which is not decoded here) is kept only when it is already that small. The pixel
 * count is read from the header before a byte of pixel data is inflated. An icon that fails any of this is
 * dropped with a warning; the upload itself does not depend on its icon.
 */
import { inflateSync } from 'node:zlib';
import { PNG } from 'pngjs';
import { isCrushedPng, isPng, pngChunks, uncrushPng } from './png-cgbi';

export const ICON_MAX_SIDE = 192;
/** Of the PNG or WebP file (a real 192 px icon takes 20-60 KB); its data URL is a third larger. */
export const ICON_MAX_BYTES = 64 * 1024;
/** Largest source image decoded (an App Store icon is 1024 x 1024). */
export const ICON_MAX_SOURCE_PIXELS = 2048 * 2048;
/** A WebP is kept as it is, so the browser decodes it: its declared size is held to a few times the PNG side. */
const WEBP_MAX_SIDE = 4 * ICON_MAX_SIDE;
/** Sides tried in turn until the written PNG fits ICON_MAX_BYTES (noise at 96 px is 36 KB). */
const SIDES = [ICON_MAX_SIDE, 128, 96, 64];

export interface StoredIcon {
  /** `data:image/png;base64,…` or `data:image/webp;base64,…`; absent when the icon was dropped. */
  dataUrl?: string;
  /** Why the package's icon was dropped. */
  warning?: string;
}

const dropped = (why: string): StoredIcon => ({ warning: `The application's icon was not kept: ${why}.` });

/** The icon to store for a package's icon file (PNG, crushed PNG or WebP). */
export function storedIcon(bytes: Buffer): StoredIcon {
  if (isWebp(bytes)) return storedWebp(bytes);
  if (!isPng(bytes)) return dropped('it is neither a PNG nor a WebP image');
  try {
    const size = pngSize(bytes);
    if (size.width * size.height > ICON_MAX_SOURCE_PIXELS) {
      return dropped(`it is ${size.width} x ${size.height} pixels, more than the limit of ${ICON_MAX_SOURCE_PIXELS}`);
    }
    const image = decodePng(isCrushedPng(bytes) ? uncrushPng(bytes) : bytes, size);
    for (const side of SIDES) {
      const png = encodePng(scaledToFit(image, side));
      if (png.length <= ICON_MAX_BYTES) return { dataUrl: `data:image/png;base64,${png.toString('base64')}` };
    }
    return dropped(`even at ${SIDES[SIDES.length - 1]} pixels it takes more than ${ICON_MAX_BYTES} bytes`);
  } catch (err) {
    return dropped(`it cannot be decoded (${(err as Error).message})`);
  }
}

interface Size { width: number; height: number }
interface Rgba { width: number; height: number; data: Buffer }

function pngSize(bytes: Buffer): Size {
  const ihdr = pngChunks(bytes).find((c) => c.type === 'IHDR');
  if (!ihdr || ihdr.data.length !== 13) throw new Error('no image header');
  const width = ihdr.data.readUInt32BE(0);
  const height = ihdr.data.readUInt32BE(4);
  if (width === 0 || height === 0) throw new Error('the image is empty');
  return { width, height };
}

function decodePng(bytes: Buffer, size: Size): Rgba {
  // The image data is inflated here first, bounded, for every PNG: pngjs inflates interlaced data without a bound,
  // and its own inflate does not always fail on a broken stream (it has returned garbage pixels for one). 8 bytes a
  // pixel (16-bit RGBA) and the filter bytes of every row and interlace pass are the most a true image needs.
  const idat = Buffer.concat(pngChunks(bytes).filter((c) => c.type === 'IDAT').map((c) => c.data));
  inflateSync(idat, { maxOutputLength: 8 * size.width * size.height + 16 * (size.height + 8) });
  const png = PNG.sync.read(bytes);
  return { width: png.width, height: png.height, data: png.data };
}

/** Box filter over alpha-weighted colours, so transparent pixels do not darken the edges. */
function scaledToFit(image: Rgba, side: number): Rgba {
  const scale = Math.min(1, side / Math.max(image.width, image.height));
  if (scale === 1) return image;
  const width = Math.max(1, Math.round(image.width * scale));
  const height = Math.max(1, Math.round(image.height * scale));
  const data = Buffer.alloc(width * height * 4);
  for (let ty = 0; ty < height; ty++) {
    const y0 = Math.floor((ty * image.height) / height);
    const y1 = Math.max(y0 + 1, Math.floor(((ty + 1) * image.height) / height));
    for (let tx = 0; tx < width; tx++) {
      const x0 = Math.floor((tx * image.width) / width);
      const x1 = Math.max(x0 + 1, Math.floor(((tx + 1) * image.width) / width));
      let r = 0; let g = 0; let b = 0; let a = 0;
      for (let y = y0; y < y1; y++) {
        for (let p = (y * image.width + x0) * 4, end = (y * image.width + x1) * 4; p < end; p += 4) {
          const alpha = image.data[p + 3];
          r += image.data[p] * alpha;
          g += image.data[p + 1] * alpha;
          b += image.data[p + 2] * alpha;
          a += alpha;
        }
      }
      const q = (ty * width + tx) * 4;
      const count = (y1 - y0) * (x1 - x0);
      if (a > 0) {
        data[q] = Math.round(r / a);
        data[q + 1] = Math.round(g / a);
        data[q + 2] = Math.round(b / a);
      }
      data[q + 3] = Math.round(a / count);
    }
  }
  return { width, height, data };
}

function encodePng(image: Rgba): Buffer {
  const png = new PNG({ width: image.width, height: image.height });
  image.data.copy(png.data);
  let opaque = true;
  for (let p = 3; p < image.data.length && opaque; p += 4) opaque = image.data[p] === 255;
  return PNG.sync.write(png, { colorType: opaque ? 2 : 6, inputHasAlpha: true, deflateLevel: 9 });
}

export function isWebp(bytes: Buffer): boolean {
  return bytes.length >= 30 && bytes.subarray(0, 4).toString('latin1') === 'RIFF'
    && bytes.subarray(8, 12).toString('latin1') === 'WEBP';
}

function storedWebp(bytes: Buffer): StoredIcon {
  const size = webpSize(bytes);
  if (!size) return dropped('its WebP header cannot be read');
  if (size.width > WEBP_MAX_SIDE || size.height > WEBP_MAX_SIDE || bytes.length > ICON_MAX_BYTES) {
    return dropped(`the WebP image (${size.width} x ${size.height} pixels, ${bytes.length} bytes) is larger than `
      + `${WEBP_MAX_SIDE} pixels a side or ${ICON_MAX_BYTES} bytes`);
  }
  return { dataUrl: `data:image/webp;base64,${bytes.toString('base64')}` };
}

/** The canvas size of the first chunk: lossy (`VP8 `), lossless (`VP8L`) or extended (`VP8X`). */
function webpSize(bytes: Buffer): { width: number; height: number } | undefined {
  switch (bytes.subarray(12, 16).toString('latin1')) {
    case 'VP8 ':
      if (bytes[23] !== 0x9d || bytes[24] !== 0x01 || bytes[25] !== 0x2a) return undefined;
      return { width: bytes.readUInt16LE(26) & 0x3fff, height: bytes.readUInt16LE(28) & 0x3fff };
    case 'VP8L': {
      if (bytes[20] !== 0x2f) return undefined;
      const bits = bytes.readUInt32LE(21);
      return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
    }
    case 'VP8X':
      return { width: bytes.readUIntLE(24, 3) + 1, height: bytes.readUIntLE(27, 3) + 1 };
    default:
      return undefined;
  }
}
