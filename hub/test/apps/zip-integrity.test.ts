/** The integrity check on its own: real packages pass whole; each limit and malformation fails with its text. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiFailure } from '@devicelab/shared';
import { readAppMetadata } from '../../src/apps/app-metadata';
import { verifyZipIntegrity, type ZipLimits } from '../../src/apps/zip-integrity';
import { ZipReader } from '../../src/apps/zip-reader';
import { DEFAULT_PACKAGE_INSPECTION } from '../../src/config';
import { fixture } from '../../../scripts/jest/shared-files';
import { zeroEntriesApk } from '../support/hostile-packages';
import { buildZip, type ZipInput } from './package-builder';

const work = mkdtempSync(path.join(os.tmpdir(), 'zip-integrity-'));
let counter = 0;

async function verify(file: string, limits: Partial<ZipLimits> = {}): Promise<void> {
  const zip = await ZipReader.open(file, { maxEntries: limits.maxEntries ?? DEFAULT_PACKAGE_INSPECTION.maxEntries });
  try {
    await verifyZipIntegrity(zip, file, { ...DEFAULT_PACKAGE_INSPECTION, ...limits });
  } finally {
    await zip.close();
  }
}
function written(entries: ZipInput[]): string {
  const file = path.join(work, `${++counter}.zip`);
  writeFileSync(file, buildZip(entries));
  return file;
}

it.each(['ContactManager.apk', 'ApiDemos-debug.apk', 'app-info-android.apk', 'app-info-iphone.ipa',
  'app-info-ipad.ipa', 'app-info-embedded.ipa'])('the real %s passes', async (name) => {
  await expect(verify(fixture(name))).resolves.toBeUndefined();
});

it.each([
  ['a name twice', [{ name: 'a', data: 'x' }, { name: 'a', data: 'y' }], {}, "entry 'a' appears twice"],
  ['more entries than the limit', [{ name: 'a', data: 'x' }, { name: 'b', data: 'y' }], { maxEntries: 1 },
    'the archive has 2 entries, more than the limit of 1'],
  ['an entry larger than the limit', [{ name: 'big', data: Buffer.alloc(2048) }], { maxEntryBytes: 1024 },
    "entry 'big' would inflate to 2048 bytes, more than the limit of 1024"],
  ['entries larger than the total limit', [{ name: 'a', data: Buffer.alloc(600) }, { name: 'b', data: Buffer.alloc(600) }],
    { maxTotalBytes: 1000 }, 'the entries would inflate to more than the limit of 1000 bytes'],
  ['a control character in a name', [{ name: 'a\u0001b', data: 'x' }], {}, "entry 'a?b' has an unsafe name"],
])('%s fails', async (_what, entries, limits, message) => {
  await expect(verify(written(entries as ZipInput[]), limits as Partial<ZipLimits>)).rejects.toThrow(message as string);
});

describe('work a package costs before it is refused', () => {
  const writtenBytes = (bytes: Buffer): string => {
    const file = path.join(work, `${++counter}.zip`);
    writeFileSync(file, bytes);
    return file;
  };

  it('thousands of small entries that together inflate far beyond the ratio are refused before any is inflated', async () => {
    await expect(verify(writtenBytes(zeroEntriesApk({ manifest: true }))))
      .rejects.toThrow('the entries together have a compression ratio above the limit of 200 (a zip bomb?)');
  });

  it('an APK without AndroidManifest.xml is refused by name, before any entry is inflated', async () => {
    // The second entry fails its CRC: an archive read before the manifest is looked for would report that.
    const zip = buildZip([{ name: 'classes.dex', data: 'dex\n035' }, { name: 'assets/a', data: 'a' }]);
    zip.writeUInt32LE(0xdeadbeef, zip.indexOf('assets/a') - 30 + 14);
    zip.writeUInt32LE(0xdeadbeef, zip.lastIndexOf('assets/a') - 46 + 16);
    await expect(readAppMetadata(writtenBytes(zip), 'Android', DEFAULT_PACKAGE_INSPECTION))
      .rejects.toThrow(new ApiFailure('The upload is not a valid APK: it has no AndroidManifest.xml.'));
  });
});
