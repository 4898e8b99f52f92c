/**
 * Property lists as iOS hosts send them: XML from libimobiledevice's lockdown and usbmux clients, binary
 * (`bplist00`) from pair records, some installation_proxy clients and Info.plist files. The simulator answers in
 * XML, as lockdownd and usbmuxd do, and keeps `<real>` apart from `<integer>` (PlistReal) where the device sends
 * a real with a whole value: libplist prints a negative `<integer>` as unsigned.
 */
import { parseBuffer as parseBinary } from 'bplist-parser';
import * as plist from 'plist';

/** A value the device sends as `<real>` even when it is whole (TimeZoneOffsetFromUTC: -18000.0). */
export class PlistReal {
  constructor(readonly value: number) {}
}

export type PlistValue = string | number | boolean | Date | Buffer | PlistReal | PlistValue[] | PlistDict;
export interface PlistDict { [key: string]: PlistValue }

export class PlistFormatError extends Error {}

/** Any property list value (DeviceLink messages are arrays); PlistFormatError for bytes that are none. */
export function decodePlistValue(bytes: Buffer): PlistValue {
  try {
    if (bytes.subarray(0, 8).toString('latin1') === 'bplist00') return parseBinary(bytes)[0] as PlistValue;
    return plist.parse(bytes.toString('utf8')) as PlistValue;
  } catch (e) {
    throw new PlistFormatError(`not a property list: ${(e as Error).message}`);
  }
}

/** A decoded dictionary, or a PlistFormatError when the bytes hold anything else. */
export function decodePlistDict(bytes: Buffer): PlistDict {
  const value = decodePlistValue(bytes);
  if (!isDict(value)) throw new PlistFormatError('property list is not a dictionary');
  return value;
}

export function encodePlist(value: PlistValue): Buffer {
  const body = xmlValue(value, '');
  return Buffer.from(
    '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n'
      + `<plist version="1.0">\n${body}</plist>\n`,
    'utf8',
  );
}

export function isDict(value: PlistValue | undefined): value is PlistDict {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value) && !(value instanceof Date)
    && !(value instanceof PlistReal);
}

function xmlValue(value: PlistValue, indent: string): string {
  const line = (text: string): string => `${indent}${text}\n`;
  if (typeof value === 'string') return line(`<string>${escapeXml(value)}</string>`);
  if (typeof value === 'boolean') return line(value ? '<true/>' : '<false/>');
  if (typeof value === 'number') return line(Number.isInteger(value) ? `<integer>${value}</integer>` : `<real>${value}</real>`);
  if (value instanceof PlistReal) return line(`<real>${Number.isInteger(value.value) ? value.value.toFixed(1) : value.value}</real>`);
  if (value instanceof Date) return line(`<date>${value.toISOString().replace(/\.\d{3}Z$/, 'Z')}</date>`);
  if (Buffer.isBuffer(value)) return line(`<data>${value.toString('base64')}</data>`);
  if (Array.isArray(value)) {
    if (!value.length) return line('<array/>');
    return line('<array>') + value.map((v) => xmlValue(v, `${indent}\t`)).join('') + line('</array>');
  }
  const entries = Object.entries(value);
  if (!entries.length) return line('<dict/>');
  return line('<dict>') + entries.map(([k, v]) => `${indent}\t<key>${escapeXml(k)}</key>\n${xmlValue(v, `${indent}\t`)}`).join('') + line('</dict>');
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
