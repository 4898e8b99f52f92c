/**
 * Reader for Android binary XML (AXML), as found in an APK's AndroidManifest.xml.
 *
 * Produces a flat list of start/end element events with resolved attribute
 * values. Attribute names may be obfuscated or empty in the string pool, so
 * every attribute also carries its resource id (e.g. versionCode 0x0101021b).
 */

const RES_XML_TYPE = 0x0003;
const RES_STRING_POOL_TYPE = 0x0001;
const RES_XML_RESOURCE_MAP_TYPE = 0x0180;
const RES_XML_START_ELEMENT_TYPE = 0x0102;
const RES_XML_END_ELEMENT_TYPE = 0x0103;
const UTF8_FLAG = 0x100;
const NO_INDEX = 0xffffffff;

const TYPE_REFERENCE = 0x01;
const TYPE_STRING = 0x03;
const TYPE_INT_DEC = 0x10;
const TYPE_INT_HEX = 0x11;
const TYPE_INT_BOOLEAN = 0x12;

export interface AxmlAttribute {
  name: string;
  resourceId?: number;
  value: string | number | boolean;
}

export interface AxmlEvent {
  kind: 'start' | 'end';
  name: string;
  attributes: AxmlAttribute[];
}

export class AxmlError extends Error {}

export function parseAxml(buf: Buffer): AxmlEvent[] {
  if (buf.length < 8 || buf.readUInt16LE(0) !== RES_XML_TYPE) throw new AxmlError('not a binary XML document');
  let strings: string[] = [];
  let resourceIds: number[] = [];
  const events: AxmlEvent[] = [];
  let off = buf.readUInt16LE(2);
  while (off + 8 <= buf.length) {
    const type = buf.readUInt16LE(off);
    const headerSize = buf.readUInt16LE(off + 2);
    const size = buf.readUInt32LE(off + 4);
    if (size < 8 || off + size > buf.length) throw new AxmlError(`corrupt chunk at ${off}`);
    if (type === RES_STRING_POOL_TYPE) strings = readStringPool(buf, off);
    else if (type === RES_XML_RESOURCE_MAP_TYPE) {
      resourceIds = [];
      for (let p = off + headerSize; p + 4 <= off + size; p += 4) resourceIds.push(buf.readUInt32LE(p));
    } else if (type === RES_XML_START_ELEMENT_TYPE) {
      events.push(readStartElement(buf, off, headerSize, strings, resourceIds));
    } else if (type === RES_XML_END_ELEMENT_TYPE) {
      events.push({ kind: 'end', name: strings[buf.readUInt32LE(off + 20)] ?? '', attributes: [] });
    }
    off += size;
  }
  return events;
}

function readStringPool(buf: Buffer, chunk: number): string[] {
  const headerSize = buf.readUInt16LE(chunk + 2);
  const count = buf.readUInt32LE(chunk + 8);
  const flags = buf.readUInt32LE(chunk + 16);
  const stringsStart = chunk + buf.readUInt32LE(chunk + 20);
  const utf8 = (flags & UTF8_FLAG) !== 0;
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    let p = stringsStart + buf.readUInt32LE(chunk + headerSize + i * 4);
    if (utf8) {
      // Two lengths (UTF-16 units, then bytes), each 1 or 2 bytes with a high-bit continuation.
      p += buf[p] & 0x80 ? 2 : 1;
      let byteLength = buf[p];
      if (byteLength & 0x80) {
        byteLength = ((byteLength & 0x7f) << 8) | buf[p + 1];
        p += 2;
      } else p += 1;
      out.push(buf.toString('utf8', p, p + byteLength));
    } else {
      let units = buf.readUInt16LE(p);
      if (units & 0x8000) {
        units = ((units & 0x7fff) << 16) | buf.readUInt16LE(p + 2);
        p += 4;
      } else p += 2;
      out.push(buf.toString('utf16le', p, p + units * 2));
    }
  }
  return out;
}

function readStartElement(buf: Buffer, chunk: number, headerSize: number, strings: string[], resourceIds: number[]): AxmlEvent {
  const ext = chunk + headerSize; // ResXMLTree_attrExt follows the node header
  const name = strings[buf.readUInt32LE(ext + 4)] ?? '';
  const attributeStart = buf.readUInt16LE(ext + 8);
  const attributeSize = buf.readUInt16LE(ext + 10);
  const attributeCount = buf.readUInt16LE(ext + 12);
  const attributes: AxmlAttribute[] = [];
  for (let i = 0; i < attributeCount; i++) {
    const a = ext + attributeStart + i * attributeSize;
    const nameIndex = buf.readUInt32LE(a + 4);
    const rawValue = buf.readUInt32LE(a + 8);
    const dataType = buf[a + 15];
    const data = buf.readUInt32LE(a + 16);
    let value: string | number | boolean;
    if (rawValue !== NO_INDEX) value = strings[rawValue] ?? '';
    else if (dataType === TYPE_STRING) value = strings[data] ?? '';
    else if (dataType === TYPE_INT_DEC || dataType === TYPE_INT_HEX) value = data | 0;
    else if (dataType === TYPE_INT_BOOLEAN) value = data !== 0;
    else if (dataType === TYPE_REFERENCE) value = `@0x${data.toString(16).padStart(8, '0')}`;
    else value = data;
    attributes.push({ name: strings[nameIndex] ?? '', resourceId: resourceIds[nameIndex], value });
  }
  return { kind: 'start', name, attributes };
}
