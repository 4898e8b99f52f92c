/**
 * A generated corpus of hostile uploads for the upload tests and the upload benchmark: truncated and size-lying
 * archives, bad CRCs, traversal names, zip bombs, nested archives and seeded random corruptions of the real
 * fixtures (reproducible: the same seed gives the same bytes). `expect` says what a correct hub answers:
 * `failure`, `success`, or `reference` (success only if an independent check finds the archive intact).
 */
import { readFileSync } from 'node:fs';
import { constants, crc32, deflateRawSync } from 'node:zlib';
import { buildRawZip, zipEntry, type RawZipEntry } from '../../../scripts/jest/zip-builder';
import { hostilePackageUploads } from '../support/hostile-packages';
import { buildZip, type ZipInput } from './package-builder';

export interface HostileUpload {
  label: string;
  fileName: string;
  bytes: Buffer;
  expect: 'failure' | 'success' | 'reference';
  /** The failure text, where it is known. */
  message?: RegExp;
}

/** mulberry32: a small seeded PRNG, so a failing corpus item can be rebuilt from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MB = 1024 * 1024;
const OFFSET = { localCrc: 14, localCompressed: 18, localSize: 22, centralCrc: 16, centralCompressed: 20, centralSize: 24 };

/** Offsets of every local and central header in a buildZip archive (one of each per entry, no extras). */
function headers(zip: Buffer): { locals: number[]; centrals: number[] } {
  const locals: number[] = [];
  const centrals: number[] = [];
  for (let p = 0; p + 4 <= zip.length; p++) {
    const signature = zip.readUInt32LE(p);
    if (signature === 0x04034b50) locals.push(p);
    if (signature === 0x02014b50) centrals.push(p);
  }
  return { locals, centrals };
}

/** A raw deflate stream of `megabytes` MB of zeros, built from one flushed 1 MB block (~1 KB) repeated. */
function zerosDeflated(megabytes: number): Omit<RawZipEntry, 'name'> {
  const zeros = Buffer.alloc(MB);
  const block = deflateRawSync(zeros, { level: 9, finishFlush: constants.Z_FULL_FLUSH });
  let crc = 0;
  for (let i = 0; i < megabytes; i++) crc = crc32(zeros, crc);
  const finalEmptyBlock = Buffer.from([0x03, 0x00]);
  return { body: Buffer.concat([...Array<Buffer>(megabytes).fill(block), finalEmptyBlock]), crc: crc >>> 0, size: megabytes * MB,
    method: 'deflate' };
}

/** The 1 MB zip bomb: one AndroidManifest.xml that inflates to 1 GiB (what a naive APK reader inflates first). */
export function zipBomb(): Buffer {
  return buildRawZip([{ name: 'AndroidManifest.xml', ...zerosDeflated(1024) }]);
}

/** Crafted cases: each targets one check of the integrity verification. */
export function craftedUploads(fixture: (name: string) => string): HostileUpload[] {
  const contact = readFileSync(fixture('ContactManager.apk'));
  const iphone = readFileSync(fixture('app-info-iphone.ipa'));
  const small: ZipInput[] = [{ name: 'AndroidManifest.xml', data: Buffer.alloc(120, 7) }, { name: 'classes.dex', data: 'dex\n035' }];
  const tiny = buildZip(small);
  const patched = (zip: Buffer, edit: (copy: Buffer, h: ReturnType<typeof headers>) => void): Buffer => {
    const copy = Buffer.from(zip);
    edit(copy, headers(copy));
    return copy;
  };
  const bomb = zipBomb();
  const rawManifest: RawZipEntry = { name: 'AndroidManifest.xml', body: deflateRawSync(small[0].data), crc: crc32(small[0].data as Buffer) >>> 0,
    size: (small[0].data as Buffer).length, method: 'deflate' };
  const cases: HostileUpload[] = [
    { label: `tiny APK (${tiny.length} bytes) whose sizes are false everywhere`, fileName: 'sizes.apk', expect: 'failure',
      message: /^The upload is not a valid APK: entry 'AndroidManifest.xml' would inflate to 2147483632 bytes, more than the limit/,
      bytes: patched(tiny, (b, h) => {
        for (const p of h.locals) { b.writeUInt32LE(0x7ffffff0, p + OFFSET.localCompressed); b.writeUInt32LE(0x7ffffff0, p + OFFSET.localSize); }
        for (const p of h.centrals) { b.writeUInt32LE(0x7ffffff0, p + OFFSET.centralCompressed); b.writeUInt32LE(0x7ffffff0, p + OFFSET.centralSize); }
      }) },
    { label: 'tiny APK whose uncompressed sizes are false in both headers', fileName: 'usize.apk', expect: 'failure',
      message: /^The upload is not a valid APK: entry 'classes.dex' inflates to more than its declared 5 bytes\.$/,
      bytes: patched(tiny, (b, h) => {
        b.writeUInt32LE(5, h.locals[1] + OFFSET.localSize);
        b.writeUInt32LE(5, h.centrals[1] + OFFSET.centralSize);
      }) },
    { label: 'classes.dex with a bad CRC', fileName: 'crc.apk', expect: 'failure',
      message: /^The upload is not a valid APK: entry 'classes.dex' fails its CRC check\.$/,
      bytes: patched(tiny, (b, h) => {
        b.writeUInt32LE(0xdeadbeef, h.locals[1] + OFFSET.localCrc);
        b.writeUInt32LE(0xdeadbeef, h.centrals[1] + OFFSET.centralCrc);
      }) },
    { label: 'a ../ traversal name', fileName: 'traversal.apk', expect: 'failure', message: /entry '\.\.\/\.\.\/evil\.sh' has an unsafe name/,
      bytes: buildZip([...small, { name: '../../evil.sh', data: 'echo owned' }]) },
    { label: 'an absolute name', fileName: 'absolute.ipa', expect: 'failure', message: /^The upload is not a valid IPA: entry '\/etc\/passwd' has an unsafe name/, bytes: buildZip([{ name: 'Payload/X.app/Info.plist', data: '<plist><dict/></plist>' }, { name: '/etc/passwd', data: 'x' }]) },
    { label: 'a backslash name', fileName: 'backslash.apk', expect: 'failure', message: /has an unsafe name/, bytes: buildZip([...small, { name: '..\\evil', data: 'x' }]) },
    { label: 'the 1 MB zip bomb (1 GiB AndroidManifest.xml)', fileName: 'bomb.apk', expect: 'failure',
      message: /^The upload is not a valid APK: entry 'AndroidManifest.xml' has a compression ratio above the limit of 200/, bytes: bomb },
    { label: 'a bomb whose declared size is small (inflation must stop)', fileName: 'liar.apk', expect: 'failure', message: /inflates to more than its declared 524288 bytes/,
      bytes: patched(bomb, (b, h) => {
        b.writeUInt32LE(512 * 1024, h.locals[0] + OFFSET.localSize);
        b.writeUInt32LE(512 * 1024, h.centrals[0] + OFFSET.centralSize);
      }) },
    { label: 'many entries of highly compressible data', fileName: 'many.apk', expect: 'failure', message: /compression ratio above the limit/,
      bytes: buildRawZip([rawManifest, ...Array.from({ length: 40 }, (_, i) => ({ name: `assets/z${i}`, ...zerosDeflated(24) }))]) },
    { label: 'a valid APK with a nested bomb archive (never expanded)', fileName: 'nested.apk', expect: 'success',
      bytes: withExtraEntry(contact, 'assets/inner.zip', bomb) },
    { label: 'a valid IPA with a nested archive', fileName: 'nested.ipa', expect: 'success',
      bytes: withExtraEntry(iphone, 'Payload/AppInfoDemo.app/inner.ipa', iphone) },
  ];
  cases.push(...hostilePackageUploads(fixture));
  for (const fraction of [0.1, 0.5, 0.9, 0.999]) {
    cases.push({ label: `ContactManager.apk truncated at ${fraction * 100}%`, fileName: 'truncated.apk', expect: 'failure',
      message: /^The upload is not a valid APK: /,
      bytes: contact.subarray(0, Math.floor(contact.length * fraction)) });
  }
  return cases;
}

/** The archive with one more stored entry appended (data copied raw; central directory rewritten). */
function withExtraEntry(zip: Buffer, name: string, data: Buffer): Buffer {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const count = zip.readUInt16LE(eocd + 10);
  const cdSize = zip.readUInt32LE(eocd + 12);
  const cdOffset = zip.readUInt32LE(eocd + 16);
  const { local, central } = zipEntry(name, data, cdOffset, 'store');
  const end = Buffer.from(zip.subarray(eocd, eocd + 22));
  end.writeUInt16LE(count + 1, 8);
  end.writeUInt16LE(count + 1, 10);
  end.writeUInt32LE(cdSize + central.length, 12);
  end.writeUInt32LE(cdOffset + local.length, 16);
  end.writeUInt16LE(0, 20);
  return Buffer.concat([zip.subarray(0, cdOffset), local, zip.subarray(cdOffset, cdOffset + cdSize), central, end]);
}

const FIXTURES = [
  ['ContactManager.apk', 5], ['app-info-android.apk', 1], ['ApiDemos-debug.apk', 1],
  ['app-info-iphone.ipa', 1], ['app-info-embedded.ipa', 1], ['app-info-ipad.ipa', 1],
] as const;

/** `count` randomly corrupted copies of the fixtures (bit flips, overwritten runs, truncation, directory damage). */
export function corruptedFixtures(fixture: (name: string) => string, count: number, seed: number): HostileUpload[] {
  const random = seededRandom(seed);
  const pick = (n: number) => Math.floor(random() * n);
  const sources = FIXTURES.flatMap(([name, weight]) => Array<string>(weight).fill(name));
  const bytesOf = new Map<string, Buffer>();
  const uploads: HostileUpload[] = [];
  for (let i = 0; i < count; i++) {
    const name = sources[pick(sources.length)];
    if (!bytesOf.has(name)) bytesOf.set(name, readFileSync(fixture(name)));
    const original = bytesOf.get(name)!;
    let bytes = Buffer.from(original);
    const mutation = pick(5);
    // Half the damage lands in the last 2 KB, where the central directory and the end record live.
    const at = () => (random() < 0.5 ? bytes.length - 1 - pick(Math.min(2048, bytes.length)) : pick(bytes.length));
    let what: string;
    if (mutation === 0) {
      const flips = 1 + pick(4);
      for (let k = 0; k < flips; k++) { const p = at(); bytes[p] ^= 1 << pick(8); }
      what = `${flips} bit flips`;
    } else if (mutation === 1) {
      const p = at();
      const n = 1 + pick(16);
      for (let k = 0; k < n && p + k < bytes.length; k++) bytes[p + k] = pick(256);
      what = `${n} random bytes at ${p}`;
    } else if (mutation === 2) {
      const length = pick(bytes.length);
      bytes = bytes.subarray(0, length);
      what = `truncated to ${length} bytes`;
    } else if (mutation === 3) {
      const p = at();
      bytes.fill(0, p, Math.min(bytes.length, p + 64));
      what = `64 zero bytes at ${p}`;
    } else {
      const p = Math.max(0, at() - 3);
      bytes.writeUInt32LE(pick(2) ? 0xffffffff : pick(0x10000), Math.min(p, bytes.length - 4));
      what = `a 32-bit field at ${p} overwritten`;
    }
    uploads.push({ label: `#${i} ${name}: ${what}`, fileName: `corrupt-${i}${name.slice(name.lastIndexOf('.'))}`, bytes,
      expect: bytes.equals(original) ? 'success' : 'reference' });
  }
  return uploads;
}
