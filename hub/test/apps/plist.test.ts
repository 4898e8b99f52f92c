import { MAX_BINARY_PLIST_VALUES, parsePlist, parseXmlPlist } from '../../src/apps/plist';
import { binaryPlist, sharedValuesPlist } from '../support/hostile-packages';

const xml = (body: string) => Buffer.from(
  `<?xml version="1.0" encoding="UTF-8"?><plist version="1.0">${body}</plist>`, 'utf8');

/** A binary plist of one dictionary { key: "v" } (bplist00, 1-byte offsets and refs). */
function binaryDict(key: string): Buffer {
  const objects = [
    Buffer.from([0xd1, 0x01, 0x02]), // dict of 1: key ref 1, value ref 2
    Buffer.concat([Buffer.from([0x50 | key.length]), Buffer.from(key, 'latin1')]),
    Buffer.from([0x51, 0x76]), // "v"
  ];
  return binaryPlist(objects, 1);
}

describe('plists from uploaded files', () => {
  it('keeps a __proto__ key of an XML dictionary as an entry, never as the prototype', () => {
    const dict = parsePlist(xml('<dict><key>__proto__</key><dict><key>polluted</key><true/></dict></dict>')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(dict)).toBe(Object.prototype);
    expect((dict as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.keys(dict)).toEqual(['__proto__']);
  });

  it('keeps a __proto__ key of a binary dictionary as an entry, never as the prototype', () => {
    const dict = parsePlist(binaryDict('__proto__')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(dict)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(dict, '__proto__')?.value).toBe('v');
  });
});

describe('untrusted plists fail fast', () => {
  it('an XML plist of `<?` repeated is refused in one pass', () => {
    expect(() => parseXmlPlist(`<plist><dict>${'<?'.repeat(520_000)}`)).toThrow('a processing instruction is not closed');
  });

  it('a binary plist whose shared arrays name 2^40 values is refused as it expands; 12 levels are read', () => {
    expect(JSON.stringify(parsePlist(sharedValuesPlist(12)))).toContain('[[[[[[[[[[[["leaf","leaf"]');
    expect(() => parsePlist(sharedValuesPlist())).toThrow(`the plist expands to more than ${MAX_BINARY_PLIST_VALUES} values`);
  });
});
