/**
 * Migration 027: icons an older hub stored whole (megabytes each, in every list answer) are bounded in place,
 * as an upload bounds them now; one that does not decode is dropped. Small icons are left as they are.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { PNG } from 'pngjs';
import { BlobStore } from '../../src/apps/blob-store';
import { PackageInspector } from '../../src/apps/package-inspector';
import { DEFAULT_PACKAGE_INSPECTION } from '../../src/config';
import { listApplications, uploadApplication } from '../../src/domain/applications';
import { MAX_STORED_ICON_CHARS, up } from '../../src/store/migrations/032_bounded_icons';
import { createUser, stagedCopy } from '../domain/helpers';
import { heavyIconPng } from '../support/hostile-packages';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { fixture } from '../../../scripts/jest/shared-files';

let t: TestDatabase;
const packages = new PackageInspector(DEFAULT_PACKAGE_INSPECTION);
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await packages.stop();
  await t.drop();
});

it('bounds the icons an older hub stored whole and drops those that do not decode', async () => {
  const user = await createUser(t.db, 'icons@example.com');
  const work = mkdtempSync(path.join(os.tmpdir(), 'icons-'));
  const blobs = new BlobStore(t.db);
  const upload = () => uploadApplication(t.db, blobs, packages, user, stagedCopy(work, fixture('ContactManager.apk'), 'c.apk'));
  const [heavy, broken, small] = [await upload(), await upload(), await upload()];
  const whole = (bytes: Buffer) => `data:image/png;base64,${bytes.toString('base64')}`;
  // What an older hub stored: the package's icon file as it was.
  await t.db.updateTable('applications').set({ icon_blob: whole(heavyIconPng()) }).where('id', '=', heavy.id).execute();
  await t.db.updateTable('applications').set({ icon_blob: whole(Buffer.alloc(MAX_STORED_ICON_CHARS, 1)) })
    .where('id', '=', broken.id).execute();

  await up(t.db as unknown as Kysely<unknown>);

  const icons = new Map((await listApplications(t.db, user, () => ({}))).map((app) => [app.id, app.iconBlob]));
  const png = PNG.sync.read(Buffer.from(icons.get(heavy.id)!.replace(/^data:image\/png;base64,/, ''), 'base64'));
  expect([png.width, png.height]).toEqual([192, 192]);
  expect(icons.get(heavy.id)!.length).toBeLessThanOrEqual(MAX_STORED_ICON_CHARS);
  expect(icons.get(broken.id)).toBeUndefined();
  expect(icons.get(small.id)).toBe(small.iconBlob);
});
