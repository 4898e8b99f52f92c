/**
 * Hostile packages that are valid archives: what they attack is behind the zip checks (the icon kept in the
 * record, the manifest and plist readers, work a package costs before it is refused). Built here from small
 * parts or from a real fixture with one entry replaced, never stored in the repository.
 */
import { readFileSync } from 'node:fs';
import { crc32, deflateRawSync, inflateRawSync } from 'node:zlib';
import type { HostileUpload } from '../apps/broken-zips';
import { buildZip, standardPng, type ZipInput } from '../apps/package-builder';
import { buildRawZip, type RawZipEntry } from '../../../scripts/jest/zip-builder';

/** The entries of a plain (non-Zip64) archive, read whole. */
export function zipEntries(zip: Buffer): ZipInput[] {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const entries: ZipInput[] = [];
  for (let p = zip.readUInt32LE(end + 16), i = 0; i < zip.readUInt16LE(end + 10); i++) {
    const nameLength = zip.readUInt16LE(p + 28);
    const name = zip.subarray(p + 46, p + 46 + nameLength).toString('utf8');
    const local = zip.readUInt32LE(p + 42);
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const body = zip.subarray(start, start + zip.readUInt32LE(p + 20));
    entries.push({ name, data: zip.readUInt16LE(p + 10) === 8 ? inflateRawSync(body) : Buffer.from(body) });
    p += 46 + nameLength + zip.readUInt16LE(p + 30) + zip.readUInt16LE(p + 32);
  }
  return entries;
}

/** ContactManager.apk (icon `res/drawable-*dpi/icon.png`) with `icon` in place of each of its icons. */
export function apkWithIcon(fixture: (name: string) => string, icon: Buffer): Buffer {
  return buildZip(zipEntries(readFileSync(fixture('ContactManager.apk')))
    .map((e) => (/\/icon\.png$/.test(e.name) ? { name: e.name, data: icon } : e)));
}

/**
 * A 1400 x 1400 PNG of 7.8 MB (stored, not compressed) whose pixels the archive's deflate still shrinks ~50:1, under
 * the zip-bomb ratio: as an icon kept whole it would add 10 MB to every list answer.
 */
export function heavyIconPng(): Buffer {
  const side = 1400;
  const row = Buffer.alloc(1 + side * 4);
  // Every 97th byte scrambled (a multiplicative hash), the rest in runs of 64.
  for (let x = 0; x < side * 4; x++) row[1 + x] = x % 97 === 0 ? Math.imul(x, 2654435761) >>> 24 : (x >> 6) & 0xff;
  const rows = Buffer.concat(Array.from({ length: side }, (_, y) => {
    const copy = Buffer.from(row);
    copy[1 + ((y * 13) % (side * 4))] = y & 0xff;
    return copy;
  }));
  return standardPng(side, side, rows, { level: 0 });
}

/** A PNG whose header claims 30,000 x 30,000 pixels (3.6 GB of RGBA) over a few bytes of data. */
export function pixelBombPng(): Buffer {
  return standardPng(2, 2, Buffer.alloc(2 * 9), { declared: [30_000, 30_000] });
}

/** A PNG whose pixel data is not a deflate stream. */
export function undecodablePng(): Buffer {
  const png = standardPng(16, 16, Buffer.alloc(16 * 65));
  const idat = png.indexOf('IDAT') + 4;
  png.fill(0xff, idat, idat + 20);
  const crcAt = idat + png.readUInt32BE(idat - 8);
  png.writeUInt32BE(crc32(png.subarray(idat - 4, crcAt)) >>> 0, crcAt);
  return png;
}

/** An AndroidManifest.xml of 16 bytes: the XML chunk, then a chunk of size 0 (app-info-parser's reader loops on it). */
export function zeroSizeChunkApk(): Buffer {
  return buildZip([{ name: 'AndroidManifest.xml', data: Buffer.from('03000800100000000000080000000000', 'hex') }]);
}

/** An Info.plist of `<plist><dict>` and `<?` 520,000 times (a backtracking pattern takes minutes over it). */
export function processingInstructionsIpa(): Buffer {
  return buildZip([{ name: 'Payload/X.app/Info.plist', data: `<plist><dict>${'<?'.repeat(520_000)}` }]);
}

/**
 * A binary Info.plist whose value `a0` is `[a1, a1]`, `a1` is `[a2, a2]` and so on for `levels` levels: a few
 * hundred bytes that name 2^levels values when shared objects are expanded.
 */
export function sharedValuesPlist(levels = 40): Buffer {
  // Objects: 0 the top dict, 1-2 its keys, 3 the identifier, 4.. the arrays, last the leaf string.
  const ascii = (s: string) => Buffer.concat([Buffer.from(s.length < 15 ? [0x50 | s.length] : [0x5f, 0x10, s.length]),
    Buffer.from(s, 'latin1')]);
  const objects: Buffer[] = [Buffer.from([0xd2, 1, 2, 3, 4]), ascii('CFBundleIdentifier'), ascii('a0'), ascii('com.example.dag')];
  for (let level = 0; level < levels; level++) objects.push(Buffer.from([0xa2, 5 + level, 5 + level]));
  objects.push(ascii('leaf'));
  return binaryPlist(objects, 2);
}

/** `bplist00` around encoded `objects` (the first is the top; references are 1 byte), with its offset table. */
export function binaryPlist(objects: Buffer[], offsetSize: 1 | 2): Buffer {
  const header = Buffer.from('bplist00', 'latin1');
  const table = Buffer.alloc(objects.length * offsetSize);
  let at = header.length;
  objects.forEach((object, i) => {
    table.writeUIntBE(at, i * offsetSize, offsetSize);
    at += object.length;
  });
  const trailer = Buffer.alloc(32);
  trailer[6] = offsetSize;
  trailer[7] = 1; // reference size
  trailer.writeBigUInt64BE(BigInt(objects.length), 8);
  trailer.writeBigUInt64BE(0n, 16); // top object
  trailer.writeBigUInt64BE(BigInt(at), 24); // offset table
  return Buffer.concat([header, ...objects, table, trailer]);
}

export function sharedValuesIpa(): Buffer {
  return buildZip([{ name: 'Payload/X.app/Info.plist', data: sharedValuesPlist() }]);
}

/** 3,000 entries of 1 MB of zeros: 3 MB that inflate to 3 GB, each entry under the ratio floor of one entry. */
export function zeroEntriesApk(options: { manifest: boolean }): Buffer {
  const raw = (name: string, data: Buffer): RawZipEntry =>
    ({ name, body: deflateRawSync(data, { level: 9 }), crc: crc32(data) >>> 0, size: data.length, method: 'deflate' });
  const zeros = raw('', Buffer.alloc(1024 * 1024));
  return buildRawZip([...options.manifest ? [raw('AndroidManifest.xml', Buffer.alloc(64, 3))] : [],
    ...Array.from({ length: 3000 }, (_, i) => ({ ...zeros, name: `assets/zero${i}` }))]);
}

/** The cases above as hostile uploads: what a correct hub answers to each. */
export function hostilePackageUploads(fixture: (name: string) => string): HostileUpload[] {
  return [
    { label: 'an APK whose icon is a 7.8 MB PNG (kept small)', fileName: 'heavy-icon.apk', expect: 'success',
      bytes: apkWithIcon(fixture, heavyIconPng()) },
    { label: 'an APK whose icon claims 30000 x 30000 pixels (dropped)', fileName: 'pixel-bomb.apk', expect: 'success',
      bytes: apkWithIcon(fixture, pixelBombPng()) },
    { label: 'an APK whose icon does not decode (dropped)', fileName: 'undecodable-icon.apk', expect: 'success',
      bytes: apkWithIcon(fixture, undecodablePng()) },
    { label: 'an AndroidManifest.xml with a chunk of size 0', fileName: 'zero-chunk.apk', expect: 'failure',
      message: /^The upload is not a valid APK: its AndroidManifest.xml cannot be read \(the chunk of type 0x0 at offset 8 has an impossible size\)\.$/,
      bytes: zeroSizeChunkApk() },
    { label: 'a resources.arsc whose second chunk points back at the first', fileName: 'arsc-loop.apk', expect: 'failure',
      message: /^The upload is not a valid APK: its resources.arsc cannot be read \(the chunk of type 0x1 at offset 40/,
      bytes: loopingResourcesApk(fixture) },
    { label: 'an Info.plist of `<?` repeated 520,000 times', fileName: 'pi.ipa', expect: 'failure',
      message: /^The file is not a valid iOS application package\.$/, bytes: processingInstructionsIpa() },
    { label: 'a binary Info.plist naming 2^40 values', fileName: 'dag.ipa', expect: 'failure',
      message: /^The file is not a valid iOS application package\.$/, bytes: sharedValuesIpa() },
    { label: '3,000 entries of 1 MB of zeros and no manifest', fileName: 'zeros.apk', expect: 'failure',
      message: /^The upload is not a valid APK: it has no AndroidManifest\.xml\.$/, bytes: zeroEntriesApk({ manifest: false }) },
    { label: '3,000 entries of 1 MB of zeros beside a manifest', fileName: 'zeros-manifest.apk', expect: 'failure',
      message: /^The upload is not a valid APK: the entries together have a compression ratio above the limit of 200/,
      bytes: zeroEntriesApk({ manifest: true }) },
  ];
}

/**
 * ContactManager.apk whose resources.arsc is a table of an empty string pool and then a second pool whose size
 * (-28) points back at the first: app-info-parser's table reader goes back and forth between the two forever.
 */
export function loopingResourcesApk(fixture: (name: string) => string): Buffer {
  const table = Buffer.alloc(12 + 28 + 8);
  table.writeUInt16LE(0x0002, 0); // RES_TABLE_TYPE
  table.writeUInt16LE(12, 2);
  table.writeUInt32LE(table.length, 4);
  table.writeUInt32LE(0, 8); // packages
  table.writeUInt16LE(0x0001, 12); // an empty string pool
  table.writeUInt16LE(28, 14);
  table.writeUInt32LE(28, 16);
  table.writeUInt16LE(0x0001, 40);
  table.writeUInt16LE(8, 42);
  table.writeInt32LE(-28, 44);
  return buildZip(zipEntries(readFileSync(fixture('ContactManager.apk')))
    .map((e) => (e.name === 'resources.arsc' ? { name: e.name, data: table } : e)));
}
