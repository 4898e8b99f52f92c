/**
 * Property lists as found in iOS packages: XML (`<?xml … <plist>`) and binary (`bplist00`). Values map to
 * string, number, bigint (integers beyond 2^53), boolean, Date, Buffer (`<data>`), arrays and plain objects.
 * Anything malformed is a PlistFormatError.
 */
export type PlistValue = string | number | bigint | boolean | Date | Buffer | PlistValue[] | PlistDict;
export interface PlistDict { [key: string]: PlistValue }

export class PlistFormatError extends Error {}

/** Keys come from an uploaded file: `__proto__` must become an own entry, never the dictionary's prototype. */
function setEntry(dict: PlistDict, key: string, value: PlistValue): void {
  Object.defineProperty(dict, key, { value, enumerable: true, writable: true, configurable: true });
}

export function parsePlist(bytes: Buffer): PlistValue {
  if (bytes.subarray(0, 8).toString('latin1') === 'bplist00') return parseBinaryPlist(bytes);
  return parseXmlPlist(bytes.toString('utf8').replace(/^\uFEFF/, ''));
}

// ---------- XML ----------

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeText(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

/**
 * Tags (open, close, self-closing) and the non-blank text between them; comments, processing instructions and
 * DOCTYPE are dropped. One pass with indexOf: the text is untrusted, and a backtracking pattern over it (a lazy
 * `<\?[\s\S]*?\?>`) costs quadratic time on `<?` repeated.
 */
function xmlTokens(text: string): string[] {
  const tokens: string[] = [];
  const skipPast = (end: string, from: number, what: string): number => {
    const at = text.indexOf(end, from);
    if (at < 0) throw new PlistFormatError(`${what} is not closed`);
    return at + end.length;
  };
  for (let i = 0; i < text.length;) {
    const open = text.indexOf('<', i);
    const between = text.slice(i, open < 0 ? text.length : open);
    if (between.trim() !== '') tokens.push(between);
    if (open < 0) break;
    if (text.startsWith('<?', open)) i = skipPast('?>', open + 2, 'a processing instruction');
    else if (text.startsWith('<!--', open)) i = skipPast('-->', open + 4, 'a comment');
    else if (text.slice(open, open + 9).toUpperCase() === '<!DOCTYPE') i = skipPast('>', open + 9, 'the DOCTYPE');
    else {
      i = skipPast('>', open + 1, `the tag at offset ${open}`);
      tokens.push(text.slice(open, i));
    }
  }
  return tokens;
}

export function parseXmlPlist(text: string): PlistValue {
  const tokens = xmlTokens(text);
  let i = 0;
  const expectOpen = (): { name: string; selfClosing: boolean } => {
    const token = tokens[i++];
    const m = token === undefined ? null : /^<([A-Za-z]+)[^>]*?(\/?)>$/.exec(token);
    if (!m) throw new PlistFormatError(`unexpected '${token ?? 'end of document'}'`);
    return { name: m[1], selfClosing: m[2] === '/' };
  };
  const textUntilClose = (name: string): string => {
    let content = '';
    while (i < tokens.length && tokens[i] !== `</${name}>`) {
      if (tokens[i].startsWith('<')) throw new PlistFormatError(`unexpected ${tokens[i]} inside <${name}>`);
      content += tokens[i++];
    }
    if (tokens[i++] !== `</${name}>`) throw new PlistFormatError(`<${name}> is not closed`);
    return decodeText(content);
  };
  const value = (): PlistValue => {
    const { name, selfClosing } = expectOpen();
    switch (name) {
      case 'true': case 'false':
        if (!selfClosing && tokens[i++] !== `</${name}>`) throw new PlistFormatError(`<${name}> is not closed`);
        return name === 'true';
      case 'string': return selfClosing ? '' : textUntilClose(name);
      case 'integer': {
        const t = selfClosing ? '' : textUntilClose(name).trim();
        if (!/^[+-]?\d+$/.test(t)) throw new PlistFormatError(`bad integer '${t}'`);
        const n = BigInt(t);
        return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
      }
      case 'real': return Number(selfClosing ? 'NaN' : textUntilClose(name).trim());
      case 'date': {
        const d = new Date(selfClosing ? '' : textUntilClose(name).trim());
        if (Number.isNaN(d.getTime())) throw new PlistFormatError('bad date');
        return d;
      }
      case 'data': return Buffer.from(selfClosing ? '' : textUntilClose(name).replace(/\s+/g, ''), 'base64');
      case 'array': {
        const out: PlistValue[] = [];
        if (selfClosing) return out;
        while (tokens[i] !== '</array>') {
          if (i >= tokens.length) throw new PlistFormatError('<array> is not closed');
          out.push(value());
        }
        i++;
        return out;
      }
      case 'dict': {
        const out: PlistDict = {};
        if (selfClosing) return out;
        while (tokens[i] !== '</dict>') {
          if (i >= tokens.length) throw new PlistFormatError('<dict> is not closed');
          const key = expectOpen();
          if (key.name !== 'key') throw new PlistFormatError(`<key> expected in <dict>, found <${key.name}>`);
          const k = key.selfClosing ? '' : textUntilClose('key');
          setEntry(out, k, value());
        }
        i++;
        return out;
      }
      default: throw new PlistFormatError(`unknown element <${name}>`);
    }
  };
  const root = expectOpen();
  if (root.name !== 'plist') throw new PlistFormatError('no <plist> root element');
  const result = value();
  if (tokens[i] !== '</plist>') throw new PlistFormatError('<plist> is not closed');
  return result;
}

// ---------- binary ----------

const APPLE_EPOCH_MS = Date.UTC(2001, 0, 1);
/** An app's Info.plist holds hundreds of values. */
export const MAX_BINARY_PLIST_VALUES = 50_000;

function parseBinaryPlist(bytes: Buffer): PlistValue {
  if (bytes.length < 40) throw new PlistFormatError('binary plist is truncated');
  const trailer = bytes.subarray(bytes.length - 32);
  const offsetSize = trailer[6];
  const refSize = trailer[7];
  const objectCount = Number(trailer.readBigUInt64BE(8));
  const top = Number(trailer.readBigUInt64BE(16));
  const tableOffset = Number(trailer.readBigUInt64BE(24));
  if (![1, 2, 4, 8].includes(offsetSize) || ![1, 2, 4, 8].includes(refSize)
    || tableOffset + objectCount * offsetSize > bytes.length - 32 || top >= objectCount) {
    throw new PlistFormatError('bad binary plist trailer');
  }
  const uint = (at: number, size: number): number => {
    if (at + size > bytes.length) throw new PlistFormatError('binary plist is truncated');
    return size === 8 ? Number(bytes.readBigUInt64BE(at)) : bytes.readUIntBE(at, size);
  };
  const offsetOf = (ref: number): number => {
    if (ref >= objectCount) throw new PlistFormatError('bad object reference');
    return uint(tableOffset + ref * offsetSize, offsetSize);
  };
  const visiting = new Set<number>();
  let expanded = 0;
  const object = (ref: number): PlistValue => {
    if (visiting.has(ref)) throw new PlistFormatError('object reference cycle');
    // Objects may be shared, so a small file can name a huge tree (each level an array of the next, twice).
    if (++expanded > MAX_BINARY_PLIST_VALUES) {
      throw new PlistFormatError(`the plist expands to more than ${MAX_BINARY_PLIST_VALUES} values`);
    }
    visiting.add(ref);
    try {
      return read(offsetOf(ref));
    } finally {
      visiting.delete(ref);
    }
  };
  /** Length of a container/string: the low nibble, or 0xF followed by an int object. */
  const lengthAt = (at: number): [number, number] => {
    const low = bytes[at] & 0x0f;
    if (low !== 0x0f) return [low, at + 1];
    const size = 1 << (bytes[at + 1] & 0x0f);
    return [uint(at + 2, size), at + 2 + size];
  };
  const read = (at: number): PlistValue => {
    if (at >= bytes.length - 32) throw new PlistFormatError('object offset outside the plist');
    const marker = bytes[at];
    const high = marker >> 4;
    switch (high) {
      case 0x0:
        if (marker === 0x08) return false;
        if (marker === 0x09) return true;
        throw new PlistFormatError(`unsupported marker 0x${marker.toString(16)}`);
      case 0x1: {
        const size = 1 << (marker & 0x0f);
        if (size === 8) {
          const v = bytes.readBigInt64BE(at + 1);
          return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
        }
        if (size === 16) return bytes.readBigInt64BE(at + 9);
        return uint(at + 1, size);
      }
      case 0x2: return (marker & 0x0f) === 2 ? bytes.readFloatBE(at + 1) : bytes.readDoubleBE(at + 1);
      case 0x3: return new Date(APPLE_EPOCH_MS + bytes.readDoubleBE(at + 1) * 1000);
      case 0x4: { const [n, s] = lengthAt(at); return Buffer.from(slice(s, n)); }
      case 0x5: { const [n, s] = lengthAt(at); return slice(s, n).toString('latin1'); }
      case 0x6: { const [n, s] = lengthAt(at); return utf16be(slice(s, n * 2)); }
      case 0x8: return uint(at + 1, (marker & 0x0f) + 1); // UID (keyed archives)
      case 0xa: {
        const [n, s] = lengthAt(at);
        return Array.from({ length: n }, (_, k) => object(uint(s + k * refSize, refSize)));
      }
      case 0xd: {
        const [n, s] = lengthAt(at);
        const out: PlistDict = {};
        for (let k = 0; k < n; k++) {
          const key = object(uint(s + k * refSize, refSize));
          if (typeof key !== 'string') throw new PlistFormatError('dictionary key is not a string');
          setEntry(out, key, object(uint(s + (n + k) * refSize, refSize)));
        }
        return out;
      }
      default: throw new PlistFormatError(`unsupported marker 0x${marker.toString(16)}`);
    }
  };
  const slice = (start: number, length: number): Buffer => {
    if (start + length > bytes.length) throw new PlistFormatError('binary plist is truncated');
    return bytes.subarray(start, start + length);
  };
  return object(top);
}

function utf16be(bytes: Buffer): string {
  const swapped = Buffer.from(bytes);
  swapped.swap16();
  return swapped.toString('utf16le');
}
