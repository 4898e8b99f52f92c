import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiFailure } from '@devicelab/shared';
import { IPA_ERRORS, readIpaMetadata } from '../../src/apps/ipa-metadata';
import { isCrushedPng, uncrushPng } from '../../src/apps/png-cgbi';
import { ZipReader } from '../../src/apps/zip-reader';
import { fixture } from '../../../scripts/jest/shared-files';
import { buildZip, crushedPng, decodeStandardPng, mobileProvision, xmlPlist, type ZipInput } from './package-builder';

/** Parsing happens "today"; every real profile has expired by now. */
const NOW = new Date('2026-01-01T00:00:00Z');
const work = mkdtempSync(path.join(os.tmpdir(), 'ipa-test-'));
let counter = 0;
function written(entries: ZipInput[] | Buffer): string {
  const file = path.join(work, `built-${++counter}.ipa`);
  writeFileSync(file, Buffer.isBuffer(entries) ? entries : buildZip(entries));
  return file;
}
const icon = (url: string | undefined) => decodeStandardPng(Buffer.from(url!.replace(/^data:image\/png;base64,/, ''), 'base64'));

describe('real IPA fixtures (values from fixtures/README.md)', () => {
  it('app-info-iphone.ipa: binary plist, fat executable signed by a development certificate in the profile', async () => {
    const meta = await readIpaMetadata(fixture('app-info-iphone.ipa'), NOW);
    expect(meta).toMatchObject({
      operatingSystem: 'iOS', applicationIdentifier: 'com.icyleaf.AppInfoDemo', version: '1.2.3', buildVersion: '5',
      displayName: 'AppInfoDemo', minimumOperatingSystemVersion: '9.3', supportedFormFactors: 'Phone',
      provisionExpirationDate: new Date('2017-07-27T09:44:49Z'), provisionsAllDevices: false,
      appTeamIdentifier: '5PJA6N5A3B', signingCertificateName: 'iPhone Developer: Yi Xiao (54P9L43M84)',
      signingCertificateInProfile: true,
    });
    expect(meta.iconDataUrl).toBeUndefined();
    expect(meta.applicationErrors).toEqual([IPA_ERRORS.expired(new Date('2017-07-27T09:44:49Z'))]);
    expect(meta.applicationErrors[0]).toBe('The provisioning profile expired on 2017-07-27T09:44:49Z.');
    expect(meta.platform).toBe('iphoneos');
    expect(meta.provisionedDevices).toHaveLength(100);
    expect(meta.provisionedDevices?.[0]).toBe('18cf53cddee60c52f9c97b1521e7cbf8342628da');
  });

  it('the distribution and in-house profiles list no devices', async () => {
    expect((await readIpaMetadata(fixture('app-info-ipad.ipa'), NOW)).provisionedDevices).toEqual([]);
    expect(await readIpaMetadata(fixture('app-info-embedded.ipa'), NOW)).toMatchObject({ provisionsAllDevices: true, provisionedDevices: [] });
  });

  it('app-info-ipad.ipa: tablet, crushed icons converted, placeholder signature has no signer', async () => {
    const meta = await readIpaMetadata(fixture('app-info-ipad.ipa'), NOW);
    expect(meta).toMatchObject({
      applicationIdentifier: 'com.icyleaf.bundle', version: '1.0', buildVersion: '1', displayName: 'bundle',
      minimumOperatingSystemVersion: '9.3', supportedFormFactors: 'Tablet',
      provisionExpirationDate: new Date('2017-04-12T09:37:18Z'), provisionsAllDevices: false,
      appTeamIdentifier: '5PJA6N5A3B', signingCertificateInProfile: false,
    });
    expect(meta.signingCertificateName).toBeUndefined();
    expect(meta.applicationErrors).toEqual(['The provisioning profile expired on 2017-04-12T09:37:18Z.']);
    // The widest icon is AppIcon83.5x83.5@2x~ipad.png: 167 px, converted to a standard PNG a browser can show.
    const png = icon(meta.iconDataUrl);
    expect(png.width).toBe(167);
    expect(png.height).toBe(167);
    expect(png.chunks).not.toContain('CgBI');
    // Rounded transparent corners, opaque body; the background is gold (red well above blue): with the BGRA
    // order left unswapped it would come out blue.
    expect(png.pixels[0][3]).toBe(0);
    const opaque = png.pixels.filter((p) => p[3] === 255);
    expect(opaque.length).toBeGreaterThan(0.9 * png.pixels.length);
    const mean = (k: number) => opaque.reduce((sum, p) => sum + p[k], 0) / opaque.length;
    expect(mean(0)).toBeGreaterThan(mean(2) + 50);
    expect(new Set(png.pixels.map((p) => p.join())).size).toBeGreaterThan(10);
  });

  it('app-info-embedded.ipa: XML plist, universal, in-house profile; the extension is ignored', async () => {
    const meta = await readIpaMetadata(fixture('app-info-embedded.ipa'), NOW);
    expect(meta).toMatchObject({
      applicationIdentifier: 'com.icyleaf.test.Demo', version: '1.0', buildVersion: '1', displayName: 'Demo',
      minimumOperatingSystemVersion: '14.3', supportedFormFactors: 'Universal',
      provisionExpirationDate: new Date('2022-01-15T06:40:53Z'), provisionsAllDevices: true,
      appTeamIdentifier: '72LA85G59H',
      signingCertificateName: 'iPhone Distribution: Niceliving Beijing Technology Co. Ltd.',
      signingCertificateInProfile: true,
    });
    expect(meta.iconDataUrl).toBeUndefined();
    expect(meta.applicationErrors).toEqual(['The provisioning profile expired on 2022-01-15T06:40:53Z.']);
  });

  it('a profile that has not expired yet is no error', async () => {
    const meta = await readIpaMetadata(fixture('app-info-embedded.ipa'), new Date('2021-06-01T00:00:00Z'));
    expect(meta.applicationErrors).toEqual([]);
  });
});

describe('built IPAs', () => {
  const info = (extra: Record<string, unknown> = {}) => xmlPlist({
    CFBundleIdentifier: 'com.example.built', CFBundleName: 'Built', CFBundleShortVersionString: '3.1',
    CFBundleVersion: '42', CFBundleExecutable: 'Built', MinimumOSVersion: '15.0', ...extra as Record<string, string>,
  });
  const futureProfile = (extra: Record<string, unknown> = {}) => mobileProvision({
    ExpirationDate: new Date('2099-01-01T00:00:00Z'), TeamIdentifier: ['ABCDE12345'], ...extra as Record<string, string>,
  });

  it('a simulator build is flagged; display name wins over bundle name; no UIDeviceFamily means Phone', async () => {
    const meta = await readIpaMetadata(written([
      { name: 'Payload/Built.app/Info.plist', data: info({ CFBundleDisplayName: 'Shown Name',
        CFBundleSupportedPlatforms: ['iPhoneSimulator'] as unknown as string }) },
      { name: 'Payload/Built.app/embedded.mobileprovision', data: futureProfile() },
    ]), NOW);
    expect(meta).toMatchObject({ displayName: 'Shown Name', supportedFormFactors: 'Phone', appTeamIdentifier: 'ABCDE12345',
      version: '3.1', buildVersion: '42', minimumOperatingSystemVersion: '15.0',
      provisionExpirationDate: new Date('2099-01-01T00:00:00Z'), provisionsAllDevices: false });
    expect(meta.applicationErrors).toEqual([IPA_ERRORS.simulator]);
    expect(meta.platform).toBe('iphonesimulator');
  });

  it('a zipped simulator .app (bundle at the root) is read like an IPA; it needs no profile; its platform is recorded', async () => {
    const meta = await readIpaMetadata(written([
      { name: 'Built.app/Info.plist', data: info({ DTPlatformName: 'iphonesimulator', CFBundleSupportedPlatforms: ['iPhoneSimulator'] as unknown as string }) },
      { name: 'Built.app/Built', data: 'executable' },
    ]), NOW);
    expect(meta).toMatchObject({ applicationIdentifier: 'com.example.built', version: '3.1', platform: 'iphonesimulator' });
    expect(meta.applicationErrors).toEqual([IPA_ERRORS.simulator]);
  });

  it('an archive with an app at the root and another under Payload/ is not a valid package', async () => {
    await expect(readIpaMetadata(written([
      { name: 'Built.app/Info.plist', data: info() },
      { name: 'Payload/Built.app/Info.plist', data: info() },
    ]), NOW)).rejects.toThrow('The file is not a valid iOS application package.');
  });

  it('only the top-level app counts: nested apps and extensions are ignored; no profile is reported', async () => {
    const meta = await readIpaMetadata(written([
      { name: 'Payload/Built.app/Watch/Watch.app/Info.plist', data: info({ CFBundleIdentifier: 'com.example.watch' }) },
      { name: 'Payload/Built.app/PlugIns/Ext.appex/Info.plist', data: info({ CFBundleIdentifier: 'com.example.ext' }) },
      { name: 'Payload/Built.app/PlugIns/Ext.appex/embedded.mobileprovision', data: futureProfile() },
      { name: 'Payload/Built.app/Info.plist', data: info({ UIDeviceFamily: [1, 2] as unknown as string }) },
    ]), NOW);
    expect(meta).toMatchObject({ applicationIdentifier: 'com.example.built', supportedFormFactors: 'Universal' });
    expect(meta.appTeamIdentifier).toBeUndefined();
    expect(meta.applicationErrors).toEqual([IPA_ERRORS.noProfile]);
  });

  it('a signing certificate that is not in the profile is flagged', async () => {
    // The real, signed executable of the iPhone fixture, paired with a profile that lists no certificate of it.
    const zip = await ZipReader.open(fixture('app-info-iphone.ipa'));
    const executable = await zip.read(zip.find('Payload/AppInfoDemo.app/AppInfoDemo')!, 64 * 1024 * 1024);
    await zip.close();
    const meta = await readIpaMetadata(written([
      { name: 'Payload/Built.app/Info.plist', data: info({ UIDeviceFamily: [2] as unknown as string }) },
      { name: 'Payload/Built.app/Built', data: executable },
      { name: 'Payload/Built.app/embedded.mobileprovision',
        data: futureProfile({ DeveloperCertificates: [Buffer.from('not this one')] as unknown as string }) },
    ]), NOW);
    expect(meta).toMatchObject({ supportedFormFactors: 'Tablet',
      signingCertificateName: 'iPhone Developer: Yi Xiao (54P9L43M84)', signingCertificateInProfile: false });
    expect(meta.applicationErrors).toEqual([IPA_ERRORS.certificateNotInProfile]);
  });

  it('a crushed icon named in the plist is converted', async () => {
    const pixels: [number, number, number, number][] = [[255, 0, 0, 255], [0, 128, 255, 128], [10, 20, 30, 0], [200, 100, 50, 200]];
    const meta = await readIpaMetadata(written([
      { name: 'Payload/Built.app/Info.plist', data: info({ CFBundleIconFiles: ['Icon'] as unknown as string }) },
      { name: 'Payload/Built.app/Icon@2x.png', data: crushedPng(2, pixels) },
    ]), NOW);
    const png = icon(meta.iconDataUrl);
    expect([png.width, png.height]).toEqual([2, 2]);
    expect(png.pixels[0]).toEqual([255, 0, 0, 255]);
    expect(png.pixels[2][3]).toBe(0);
    for (const [i, expected] of pixels.entries()) {
      if (expected[3] === 0) continue;
      png.pixels[i].forEach((v, k) => expect(Math.abs(v - expected[k])).toBeLessThanOrEqual(2));
    }
  });

  it.each([
    ['a file that is not a ZIP', Buffer.from('definitely not a zip archive, just text')],
    ['a ZIP without Payload/*.app/Info.plist', buildZip([{ name: 'Other/Info.plist', data: xmlPlist({ a: 'b' }) }])],
    ['an Info.plist that is not a plist', buildZip([{ name: 'Payload/X.app/Info.plist', data: 'garbage <dict>' }])],
    ['an Info.plist without CFBundleIdentifier', buildZip([{ name: 'Payload/X.app/Info.plist', data: xmlPlist({ CFBundleName: 'X' }) }])],
    ['two top-level apps', buildZip([{ name: 'Payload/A.app/Info.plist', data: xmlPlist({ CFBundleIdentifier: 'a' }) },
      { name: 'Payload/B.app/Info.plist', data: xmlPlist({ CFBundleIdentifier: 'b' }) }])],
    ['a truncated real IPA', readFileSync(fixture('app-info-iphone.ipa')).subarray(0, 30_000)],
  ])('%s is not a valid iOS package', async (_what, bytes) => {
    await expect(readIpaMetadata(written(bytes), NOW))
      .rejects.toThrow(new ApiFailure('The file is not a valid iOS application package.'));
  });
});

describe('CgBI conversion', () => {
  it('leaves a standard PNG alone and converts a crushed one', () => {
    const crushed = crushedPng(1, [[40, 80, 120, 255]]);
    expect(isCrushedPng(crushed)).toBe(true);
    const converted = uncrushPng(crushed);
    expect(isCrushedPng(converted)).toBe(false);
    expect(decodeStandardPng(converted).pixels).toEqual([[40, 80, 120, 255]]);
    expect(uncrushPng(converted)).toBe(converted);
  });
});
