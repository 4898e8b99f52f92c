/**
 * The package worker pool: a parse that overruns its deadline or its heap ends its worker only and becomes a
 * failure; the pool goes on with fresh workers. Parses are bounded per user and in all.
 */
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiFailure } from '@devicelab/shared';
import { PackageInspector } from '../../src/apps/package-inspector';
import { DEFAULT_PACKAGE_INSPECTION } from '../../src/config';
import { loopingResourcesApk, processingInstructionsIpa, sharedValuesIpa, zeroSizeChunkApk } from '../support/hostile-packages';
import { fixture } from '../../../scripts/jest/shared-files';

const work = mkdtempSync(path.join(os.tmpdir(), 'inspector-'));
const apk = path.join(work, 'ContactManager.apk');
copyFileSync(fixture('ContactManager.apk'), apk);

it('a parse past its deadline fails with a clear text, and the next parse gets a fresh worker', async () => {
  const inspector = new PackageInspector({ ...DEFAULT_PACKAGE_INSPECTION, timeoutMs: 1, workers: 1 });
  try {
    await expect(inspector.inspect(apk, 'Android', 'tester'))
      .rejects.toThrow(new ApiFailure('The upload could not be read within the limit of 0.001 s; it was not stored.'));
    await expect(inspector.inspect(apk, 'Android', 'tester')).rejects.toThrow(ApiFailure);
  } finally {
    await inspector.stop();
  }
  const healthy = new PackageInspector({ ...DEFAULT_PACKAGE_INSPECTION, workers: 1 });
  try {
    expect(await healthy.inspect(apk, 'Android', 'tester')).toMatchObject({ applicationIdentifier: 'com.example.android.contactmanager' });
  } finally {
    await healthy.stop();
  }
});

it('a worker that runs out of its heap is a failure, not a crash of the process', async () => {
  const inspector = new PackageInspector({ ...DEFAULT_PACKAGE_INSPECTION, heapMb: 4, workers: 1 });
  try {
    await expect(inspector.inspect(apk, 'Android', 'tester')).rejects.toThrow(
      /^The upload is not a valid APK: reading it (needs more than the limit of 4 MB of memory|failed)/);
  } finally {
    await inspector.stop();
  }
});

it('refuses a parse beyond the owner\'s share or beyond the queue at once, and takes one again when there is room', async () => {
  const inspector = new PackageInspector({ ...DEFAULT_PACKAGE_INSPECTION, workers: 1, maxPerUser: 2, maxWaiting: 2 });
  try {
    const accepted = [inspector.inspect(apk, 'Android', 'a'), inspector.inspect(apk, 'Android', 'a')];
    await expect(inspector.inspect(apk, 'Android', 'a')).rejects.toThrow(new ApiFailure(
      '2 of your uploads are being read, the most one user may have at once; upload this file again when one of them is done.'));
    accepted.push(inspector.inspect(apk, 'Android', 'b')); // a's first runs; a's second and b's wait
    await expect(inspector.inspect(apk, 'Android', 'c')).rejects.toThrow(new ApiFailure(
      'The hub has 2 uploads waiting to be read, the most it queues; upload the file again later.'));
    for (const parse of accepted) expect(await parse).toMatchObject({ applicationIdentifier: 'com.example.android.contactmanager' });
    expect(await inspector.inspect(apk, 'Android', 'c')).toMatchObject({ applicationIdentifier: 'com.example.android.contactmanager' });
  } finally {
    await inspector.stop();
  }
});

describe('packages that made the parsers run until the deadline fail on their own', () => {
  // The deadline is far above what these take now, so reaching it (the old behaviour) fails the test.
  const inspector = new PackageInspector({ ...DEFAULT_PACKAGE_INSPECTION, timeoutMs: 20_000 });
  afterAll(() => inspector.stop());
  const written = (name: string, bytes: Buffer) => {
    writeFileSync(path.join(work, name), bytes);
    return path.join(work, name);
  };

  it('an AndroidManifest.xml with a chunk of size 0', async () => {
    await expect(inspector.inspect(written('zero.apk', zeroSizeChunkApk()), 'Android', 'tester')).rejects.toThrow(new ApiFailure(
      'The upload is not a valid APK: its AndroidManifest.xml cannot be read (the chunk of type 0x0 at offset 8 has an impossible size).'));
  });

  it('a resources.arsc whose second chunk points back at the first', async () => {
    await expect(inspector.inspect(written('loop.apk', loopingResourcesApk(fixture)), 'Android', 'tester')).rejects.toThrow(new ApiFailure(
      'The upload is not a valid APK: its resources.arsc cannot be read (the chunk of type 0x1 at offset 40 has an impossible size).'));
  });

  it('an Info.plist of `<?` repeated 520,000 times', async () => {
    await expect(inspector.inspect(written('pi.ipa', processingInstructionsIpa()), 'iOS', 'tester')).rejects.toThrow(
      new ApiFailure('The file is not a valid iOS application package.'));
  });

  it('a binary Info.plist whose shared arrays name 2^40 values', async () => {
    await expect(inspector.inspect(written('dag.ipa', sharedValuesIpa()), 'iOS', 'tester')).rejects.toThrow(
      new ApiFailure('The file is not a valid iOS application package.'));
  }, 30_000);
});
