/**
 * The package worker pool: a parse that overruns its deadline or its heap ends its worker only and becomes a
 * failure; the pool goes on with fresh workers.
 */
import { copyFileSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiFailure } from '@devicelab/shared';
import { PackageInspector } from '../../src/apps/package-inspector';
import { DEFAULT_PACKAGE_INSPECTION } from '../../src/config';
import { fixture } from '../../../scripts/jest/shared-files';

const work = mkdtempSync(path.join(os.tmpdir(), 'inspector-'));
const apk = path.join(work, 'ContactManager.apk');
copyFileSync(fixture('ContactManager.apk'), apk);

it('a parse past its deadline fails with a clear text, and the next parse gets a fresh worker', async () => {
  const inspector = new PackageInspector({ ...DEFAULT_PACKAGE_INSPECTION, timeoutMs: 1, workers: 1 });
  try {
    await expect(inspector.inspect(apk, 'Android'))
      .rejects.toThrow(new ApiFailure('The upload could not be read within the limit of 0.001 s; it was not stored.'));
    await expect(inspector.inspect(apk, 'Android')).rejects.toThrow(ApiFailure);
  } finally {
    await inspector.stop();
  }
  const healthy = new PackageInspector({ ...DEFAULT_PACKAGE_INSPECTION, workers: 1 });
  try {
    expect(await healthy.inspect(apk, 'Android')).toMatchObject({ applicationIdentifier: 'com.example.android.contactmanager' });
  } finally {
    await healthy.stop();
  }
});

it('a worker that runs out of its heap is a failure, not a crash of the process', async () => {
  const inspector = new PackageInspector({ ...DEFAULT_PACKAGE_INSPECTION, heapMb: 4, workers: 1 });
  try {
    await expect(inspector.inspect(apk, 'Android')).rejects.toThrow(
      /^The upload is not a valid APK: reading it (needs more than the limit of 4 MB of memory|failed)/);
  } finally {
    await inspector.stop();
  }
});
