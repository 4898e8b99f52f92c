/**
 * Property lists as iOS hosts send them: XML from libimobiledevice's lockdown and usbmux clients, binary
 * (`bplist00`) from pair records, some installation_proxy clients and Info.plist files. The simulator answers in
 * XML, as lockdownd and usbmuxd do.
 */
import { parseBuffer as parseBinary } from 'bplist-parser';
import * as plist from 'plist';

export type PlistValue = string | number | boolean | Date | Buffer | PlistValue[] | PlistDict;
export interface PlistDict { [key: string]: PlistValue }

export class PlistFormatError extends Error {}

function decodePlist(bytes: Buffer): PlistValue {
  try {
    if (bytes.subarray(0, 8).toString('latin1') === 'bplist00') return parseBinary(bytes)[0] as PlistValue;
    return plist.parse(bytes.toString('utf8')) as PlistValue;
  } catch (e) {
    throw new PlistFormatError(`not a property list: ${(e as Error).message}`);
  }
}

/** A decoded dictionary, or a PlistFormatError when the bytes hold anything else. */
export function decodePlistDict(bytes: Buffer): PlistDict {
  const value = decodePlist(bytes);
  if (!isDict(value)) throw new PlistFormatError('property list is not a dictionary');
  return value;
}

export function encodePlist(value: PlistValue): Buffer {
  return Buffer.from(plist.build(value as plist.PlistValue), 'utf8');
}

export function isDict(value: PlistValue | undefined): value is PlistDict {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value) && !(value instanceof Date);
}
