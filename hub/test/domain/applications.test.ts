import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiFailure, type DeviceOperatingSystem } from '@devicelab/shared';
import { BlobStore } from '../../src/apps/blob-store';
import { installApplication, launchApplication, uninstallApplication } from '../../src/domain/application-commands';
import { listApplications, uploadApplication } from '../../src/domain/applications';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { PackageInspector } from '../../src/apps/package-inspector';
import { DEFAULT_PACKAGE_INSPECTION } from '../../src/config';
import { createUser, insertDevice, stagedCopy, stagedUpload, startIdleLinkServer } from './helpers';
import { fixture } from '../../../scripts/jest/shared-files';


let t: TestDatabase;
let blobs: BlobStore;
let work: string;
const packages = new PackageInspector(DEFAULT_PACKAGE_INSPECTION);
beforeAll(async () => {
  t = await createTestDatabase();
  work = mkdtempSync(path.join(os.tmpdir(), 'uploads-'));
  blobs = new BlobStore(t.db);
});
afterAll(async () => {
  await packages.stop();
  await t.drop();
});

/** A temporary copy, as the upload middleware would leave it (uploadApplication removes it). */
const staged = (name: string, os?: DeviceOperatingSystem) => stagedCopy(work, fixture(name), name, os);

describe('upload', () => {
  it('parses ContactManager.apk', async () => {
    const user = await createUser(t.db, 'up1@example.com');
    const file = staged('ContactManager.apk');
    const app = await uploadApplication(t.db, blobs, packages, user, file);
    expect(app).toMatchObject({
      applicationIdentifier: 'com.example.android.contactmanager', version: '1.0', buildVersion: '1',
      displayName: 'Contact Manager', minimumOperatingSystemVersion: '5', operatingSystem: 'Android',
      fileName: 'ContactManager.apk', fileByteCount: 25931, versionCounter: 1,
      applicationBlob: '7370e929d3ea2ef8dd030b2b0e2a86ea4e0019a6de3d1dd6aec40b0752e01722',
    });
    expect(app.iconBlob).toMatch(/^data:image\/png;base64,iVBOR/);
    expect(existsSync(file.path)).toBe(false);
    expect(await blobs.has(app.applicationBlob!)).toBe(true);
    const row = await t.db.selectFrom('applications').select('launch_activity').where('id', '=', app.id)
      .executeTakeFirstOrThrow();
    expect(row.launch_activity).toBe('com.example.android.contactmanager.ContactManager');
  });

  it('parses ApiDemos-debug.apk without version attributes', async () => {
    const user = await createUser(t.db, 'up2@example.com');
    const app = await uploadApplication(t.db, blobs, packages, user, staged('ApiDemos-debug.apk'));
    expect(app).toMatchObject({ applicationIdentifier: 'io.appium.android.apis', displayName: 'API Demos',
      minimumOperatingSystemVersion: '4' });
    expect(app.version).toBeUndefined();
    expect(app.buildVersion).toBeUndefined();
    const row = await t.db.selectFrom('applications').select('launch_activity').where('id', '=', app.id)
      .executeTakeFirstOrThrow();
    expect(row.launch_activity).toBe('io.appium.android.apis.ApiDemos');
  });

  it('parses app-info-android.apk (obfuscated resources, WebP icon) and counts versions', async () => {
    const user = await createUser(t.db, 'up3@example.com');
    const first = await uploadApplication(t.db, blobs, packages, user, staged('app-info-android.apk'));
    expect(first).toMatchObject({ applicationIdentifier: 'com.icyleaf.appinfodemo', displayName: 'AppInfoDemo',
      version: '2.1.0', buildVersion: '10', minimumOperatingSystemVersion: '14', versionCounter: 1 });
    expect(first.iconBlob).toMatch(/^data:image\/webp;base64,/);
    const second = await uploadApplication(t.db, blobs, packages, user, staged('app-info-android.apk'));
    expect(second.versionCounter).toBe(2);
    expect(second.id).not.toBe(first.id);
  });

  it('parses the IPAs basic fields and flags the expired profile', async () => {
    const user = await createUser(t.db, 'up4@example.com');
    const iphone = await uploadApplication(t.db, blobs, packages, user, staged('app-info-iphone.ipa'));
    expect(iphone).toMatchObject({ applicationIdentifier: 'com.icyleaf.AppInfoDemo', version: '1.2.3', buildVersion: '5',
      displayName: 'AppInfoDemo', minimumOperatingSystemVersion: '9.3', supportedFormFactors: 'Phone',
      operatingSystem: 'iOS', appTeamIdentifier: '5PJA6N5A3B', provisionExpirationDate: '2017-07-27T09:44:49Z',
      provisionsAllDevices: false });
    expect(iphone.applicationErrors.join(' ')).toMatch(/expired/);
    const embedded = await uploadApplication(t.db, blobs, packages, user, staged('app-info-embedded.ipa'));
    expect(embedded).toMatchObject({ supportedFormFactors: 'Universal', provisionsAllDevices: true,
      appTeamIdentifier: '72LA85G59H', displayName: 'Demo' });
    const ipad = await uploadApplication(t.db, blobs, packages, user, staged('app-info-ipad.ipa'));
    expect(ipad).toMatchObject({ supportedFormFactors: 'Tablet', applicationIdentifier: 'com.icyleaf.bundle' });
  });

  it('rejects a file that is not a package and stores nothing', async () => {
    const user = await createUser(t.db, 'up5@example.com');
    const junk = stagedUpload(work, 'junk.apk', Buffer.from('this is not a zip file'));
    const count = async (table: 'applications' | 'blobs' | 'blob_chunks') => (await t.db.selectFrom(table)
      .select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n;
    const before = [await count('blobs'), await count('blob_chunks')];
    const rows = await count('applications');
    await expect(uploadApplication(t.db, blobs, packages, user, junk)).rejects.toThrow(new ApiFailure(
      'The upload is not a valid APK: not a ZIP archive (no end of central directory record; truncated?).'));
    await expect(uploadApplication(t.db, blobs, packages, user, staged('ContactManager.apk', 'iOS')))
      .rejects.toThrow(ApiFailure);
    expect([await count('blobs'), await count('blob_chunks')]).toEqual(before);
    expect(await count('applications')).toBe(rows);
    expect(existsSync(junk.path)).toBe(false);
  });

  it('needs ApplicationUpload', async () => {
    const user = await createUser(t.db, 'up6@example.com', ['ApplicationList']);
    await expect(uploadApplication(t.db, blobs, packages, user, staged('ContactManager.apk')))
      .rejects.toThrow('User does not have required entitlement: ApplicationUpload');
  });
});

describe('listing and device commands', () => {
  it('filters applications and hides them without ApplicationList', async () => {
    const user = await createUser(t.db, 'list@example.com');
    const blind = await createUser(t.db, 'list2@example.com', []);
    await uploadApplication(t.db, blobs, packages, user, staged('ContactManager.apk'));
    expect(await listApplications(t.db, blind, {})).toEqual([]);
    const found = await listApplications(t.db, user, { applicationIdentifier: 'COM.example.android.contactmanager' });
    expect(found.length).toBeGreaterThan(0);
    expect(found.every((a) => a.applicationIdentifier === 'com.example.android.contactmanager')).toBe(true);
    expect(await listApplications(t.db, user, { operatingSystem: 'iOS', displayName: 'Contact Manager' })).toEqual([]);
  });

  it('install refuses a wrong OS, another user\'s device, and checks the entitlement first', async () => {
    const user = await createUser(t.db, 'inst2@example.com');
    const other = await createUser(t.db, 'inst3@example.com');
    const tester = await createUser(t.db, 'inst4@example.com', ['DeviceList']);
    const link = await startIdleLinkServer(t.db);
    const gateways = link.directory;
    const app = await uploadApplication(t.db, blobs, packages, user, staged('ContactManager.apk'));
    const ios = await insertDevice(t.db, { operating_system: 'iOS' });
    const taken = await insertDevice(t.db, { name: 'Taken', retained_by: other.id });
    await expect(installApplication(t.db, gateways, user, app.id, ios.id))
      .rejects.toThrow('Application operating system does not match the device.');
    await expect(installApplication(t.db, gateways, user, app.id, taken.id))
      .rejects.toThrow("Device 'Taken' is in use by 'inst3@example.com'.");
    await expect(installApplication(t.db, gateways, tester, app.id, 'nothing'))
      .rejects.toThrow('User does not have required entitlement: DeviceApplicationManagement');
    await link.stop();
  });
});
