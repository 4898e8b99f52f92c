/**
 * Builds test packages byte by byte: ZIP archives (deflated entries, real CRCs), XML property lists and Apple
 * crushed PNGs. Tests use them for cases the real fixtures do not cover (simulator builds, corrupt archives).
 */
import { crc32, deflateRawSync, deflateSync } from 'node:zlib';
import { PNG } from 'pngjs';

export { buildZip, type ZipInput } from '../../../scripts/jest/zip-builder';

type PlistInput = string | number | boolean | Date | Buffer | PlistInput[] | { [key: string]: PlistInput };

const escapeXml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function plistValue(value: PlistInput): string {
  if (typeof value === 'string') return `<string>${escapeXml(value)}</string>`;
  if (typeof value === 'number') return Number.isInteger(value) ? `<integer>${value}</integer>` : `<real>${value}</real>`;
  if (typeof value === 'boolean') return value ? '<true/>' : '<false/>';
  if (value instanceof Date) return `<date>${value.toISOString().replace(/\.\d{3}Z$/, 'Z')}</date>`;
  if (Buffer.isBuffer(value)) return `<data>${value.toString('base64')}</data>`;
  if (Array.isArray(value)) return `<array>${value.map(plistValue).join('')}</array>`;
  return `<dict>${Object.entries(value).map(([k, v]) => `<key>${escapeXml(k)}</key>${plistValue(v)}`).join('')}</dict>`;
}

export function xmlPlist(value: PlistInput): string {
  return '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" '
    + `"http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n<plist version="1.0">${plistValue(value)}</plist>\n`;
}

/** A provisioning profile as iOS packages carry it: the XML plist inside a (here: stand-in) CMS envelope. */
export function mobileProvision(profile: { [key: string]: PlistInput }): Buffer {
  return Buffer.concat([Buffer.from([0x30, 0x80, 0x06, 0x09]), Buffer.from(xmlPlist(profile)), Buffer.alloc(16, 0xa5)]);
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function ihdr(width: number, height: number): Buffer {
  const data = Buffer.alloc(13);
  data.writeUInt32BE(width, 0);
  data.writeUInt32BE(height, 4);
  data[8] = 8;
  data[9] = 6;
  return data;
}

/**
 * A standard 8-bit RGBA PNG around `rows` (each row a filter byte and width * 4 bytes), compressed at `level`
 * (0: stored, as large as the pixels), with `declared` as the header's size when it should lie.
 */
export function standardPng(width: number, height: number, rows: Buffer,
  options: { level?: number; declared?: [number, number] } = {}): Buffer {
  const [w, h] = options.declared ?? [width, height];
  return Buffer.concat([SIGNATURE, chunk('IHDR', ihdr(w, h)), chunk('IDAT', deflateSync(rows, { level: options.level ?? 6 })),
    chunk('IEND', Buffer.alloc(0))]);
}

/**
 * The crushed form Xcode writes for straight RGBA `pixels`: CgBI chunk first, BGRA order, premultiplied alpha,
 * raw deflate. Rows use the Sub filter so the converter's unfiltering is exercised too.
 */
export function crushedPng(width: number, pixels: [number, number, number, number][]): Buffer {
  const premultiplied = pixels.map(([r, g, b, a]) =>
    [Math.round((b * a) / 255), Math.round((g * a) / 255), Math.round((r * a) / 255), a]);
  const height = pixels.length / width;
  const raw: number[] = [];
  for (let y = 0; y < height; y++) {
    raw.push(1); // Sub
    for (let x = 0; x < width; x++) {
      for (let k = 0; k < 4; k++) {
        const left = x > 0 ? premultiplied[y * width + x - 1][k] : 0;
        raw.push((premultiplied[y * width + x][k] - left + 256) & 0xff);
      }
    }
  }
  return Buffer.concat([SIGNATURE, chunk('CgBI', Buffer.from([0x50, 0x00, 0x20, 0x06])), chunk('IHDR', ihdr(width, height)),
    chunk('IDAT', deflateRawSync(Buffer.from(raw))), chunk('IEND', Buffer.alloc(0))]);
}

/**
 * Reads a PNG the way a strict browser decoder would start: signature, every chunk CRC, IHDR first, no CgBI,
 * zlib-wrapped IDAT; the pixels (as RGBA) are then decoded by pngjs.
 */
export function decodeStandardPng(bytes: Buffer): { width: number; height: number; pixels: number[][]; chunks: string[] } {
  if (!bytes.subarray(0, 8).equals(SIGNATURE)) throw new Error('no PNG signature');
  const chunks: string[] = [];
  for (let p = 8; p < bytes.length;) {
    const length = bytes.readUInt32BE(p);
    const type = bytes.subarray(p + 4, p + 8).toString('latin1');
    if ((crc32(bytes.subarray(p + 4, p + 8 + length)) >>> 0) !== bytes.readUInt32BE(p + 8 + length)) {
      throw new Error(`bad CRC in ${type}`);
    }
    chunks.push(type);
    p += 12 + length;
  }
  if (chunks[0] !== 'IHDR' || chunks[chunks.length - 1] !== 'IEND') throw new Error(`bad chunk order ${chunks}`);
  const { width, height, data } = PNG.sync.read(bytes);
  const pixels: number[][] = [];
  for (let p = 0; p < data.length; p += 4) pixels.push([...data.subarray(p, p + 4)]);
  return { width, height, pixels, chunks };
}
