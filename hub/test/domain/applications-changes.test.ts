import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiFailure } from '@devicelab/shared';
import { BlobStore } from '../../src/apps/blob-store';
import { APPLICATION_NOT_FOUND_FOR_DELETE, deleteApplication, modifyApplication } from '../../src/domain/application-changes';
import { listApplications, uploadApplication } from '../../src/domain/applications';
import { applicationChanges } from '../../src/api/application-body';
import { JsonBody } from '../../src/http/json-body';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { PackageInspector } from '../../src/apps/package-inspector';
import { DEFAULT_PACKAGE_INSPECTION } from '../../src/config';
import { createUser, stagedCopy } from './helpers';
import { fixture } from '../../../scripts/jest/shared-files';

let t: TestDatabase;
let blobs: BlobStore;
const work = mkdtempSync(path.join(os.tmpdir(), 'app-changes-'));
const packages = new PackageInspector(DEFAULT_PACKAGE_INSPECTION);
beforeAll(async () => {
  t = await createTestDatabase();
  blobs = new BlobStore(t.db);
});
afterAll(async () => {
  await packages.stop();
  await t.drop();
});

let n = 0;
async function upload(name: string) {
  const user = await createUser(t.db, `uploader${++n}@example.com`, ['ApplicationUpload']);
  return uploadApplication(t.db, blobs, packages, user, stagedCopy(work, fixture(name), name));
}

describe('modifyApplication', () => {
  it('changes displayName (keys case-insensitive, unquoted) and nothing else', async () => {
    const admin = await createUser(t.db, 'mod1@example.com');
    const app = await upload('ContactManager.apk');
    await modifyApplication(t.db, admin, app.id, applicationChanges('{DisplayName:"Renamed Contacts"}'));
    const [after] = await listApplications(t.db, admin, { id: app.id });
    expect(after).toEqual({ ...app, displayName: 'Renamed Contacts' });
    await modifyApplication(t.db, admin, app.id, applicationChanges('{}'));
    expect((await listApplications(t.db, admin, { id: app.id }))[0].displayName).toBe('Renamed Contacts');
  });

  it('an unknown or read-only key fails and changes nothing, even beside displayName', async () => {
    const admin = await createUser(t.db, 'mod2@example.com');
    const app = await upload('ContactManager.apk');
    await expect(modifyApplication(t.db, admin, app.id, applicationChanges('{"displayName":"X","version":"9.9"}')))
      .rejects.toThrow(new ApiFailure("Property 'version' cannot be updated. Updatable properties: displayName."));
    await expect(modifyApplication(t.db, admin, app.id, applicationChanges('{"displayName":""}')))
      .rejects.toThrow(new ApiFailure('displayName must not be empty.'));
    expect(() => JsonBody.parse('{"displayName":')).toThrow(/^Invalid JSON body/);
    expect((await listApplications(t.db, admin, { id: app.id }))[0]).toEqual(app);
  });

  it('checks ApplicationModify before the id exists', async () => {
    const tester = await createUser(t.db, 'mod3@example.com', ['ApplicationList']);
    const admin = await createUser(t.db, 'mod4@example.com');
    const missing = '0d4c7d6e-1111-4222-8333-944455556666';
    await expect(modifyApplication(t.db, tester, missing, applicationChanges('{displayName:"x"}')))
      .rejects.toThrow(new ApiFailure('User does not have required entitlement: ApplicationModify'));
    await expect(modifyApplication(t.db, admin, missing, applicationChanges('{displayName:"x"}')))
      .rejects.toThrow(new ApiFailure(`Application '${missing}' not found.`));
  });
});

describe('deleteApplication', () => {
  it('deletes one version; the shared binary stays until the last reference is gone', async () => {
    const admin = await createUser(t.db, 'del1@example.com');
    const first = await upload('app-info-iphone.ipa');
    const second = await upload('app-info-iphone.ipa');
    const blob = first.applicationBlob!;
    expect(await deleteApplication(t.db, blobs, admin, first.id)).toEqual({ deletedIds: [first.id], removedBlobs: [] });
    expect(await blobs.has(blob)).toBe(true);
    expect(await listApplications(t.db, admin, { id: first.id })).toEqual([]);
    expect(await deleteApplication(t.db, blobs, admin, second.id)).toEqual({ deletedIds: [second.id], removedBlobs: [blob] });
    expect(await blobs.has(blob)).toBe(false);
  });

  it('all=true deletes every upload of the identifier and only those', async () => {
    const admin = await createUser(t.db, 'del2@example.com');
    const a = await upload('app-info-ipad.ipa');
    const b = await upload('app-info-ipad.ipa');
    const other = await upload('app-info-embedded.ipa');
    const result = await deleteApplication(t.db, blobs, admin, b.id, { all: true });
    expect(result.deletedIds.sort()).toEqual([a.id, b.id].sort());
    expect(await listApplications(t.db, admin, { applicationIdentifier: 'com.icyleaf.bundle' })).toEqual([]);
    expect(await blobs.has(a.applicationBlob!)).toBe(false);
    expect(await listApplications(t.db, admin, { id: other.id })).toHaveLength(1);
    expect(await blobs.has(other.applicationBlob!)).toBe(true);
  });

  it('unknown id answers the legacy text; entitlement is checked first', async () => {
    const admin = await createUser(t.db, 'del3@example.com');
    const tester = await createUser(t.db, 'del4@example.com', ['ApplicationList']);
    const missing = '0d4c7d6e-1111-4222-8333-944455556666';
    await expect(deleteApplication(t.db, blobs, admin, missing))
      .rejects.toThrow(new ApiFailure('Application not found.\nParameter name: application'));
    expect(APPLICATION_NOT_FOUND_FOR_DELETE).toBe('Application not found.\nParameter name: application');
    await expect(deleteApplication(t.db, blobs, tester, missing))
      .rejects.toThrow(new ApiFailure('User does not have required entitlement: ApplicationDelete'));
  });

  it('an upload after a delete of the same binary stores it again', async () => {
    const admin = await createUser(t.db, 'del5@example.com');
    const app = await upload('ContactManager.apk');
    await deleteApplication(t.db, blobs, admin, app.id, { all: true });
    expect(await blobs.has(app.applicationBlob!)).toBe(false);
    const again = await upload('ContactManager.apk');
    expect(again.applicationBlob).toBe(app.applicationBlob);
    expect(await blobs.has(again.applicationBlob!)).toBe(true);
  });
});
