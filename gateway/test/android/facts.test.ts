import { deriveFormFactor, FACTS_SCRIPT, factsFromOutput } from '../../src/drivers/android/facts';
import { packagesFromOutput, versionScript } from '../../src/drivers/android/installed-packages';
import { splitSections } from '../../src/drivers/android/parsers/text';
import * as S from './samples';

const factsOutput = [
  '@@getprop', S.GETPROP_PIXEL7.trim(),
  '@@wmsize', 'Physical size: 1080x2400',
  '@@wmdensity', 'Physical density: 420',
  '@@devicename', 'Pixel 7',
  '@@btaddr', '5C:17:CF:8A:2B:11',
  '@@wlanmac', 'f4:60:e2:3c:91:7a',
  '@@battery', S.DUMPSYS_BATTERY.trim(),
  '@@df', S.DF_DATA.trim(),
  '@@end', '',
].join('\r\n');

describe('device facts', () => {
  it('batches every read in one script', () => {
    expect(FACTS_SCRIPT.split('echo @@').length - 1).toBe(9);
  });

  it('maps getprop and the other reads to DeviceState fields', () => {
    const facts = factsFromOutput('127.0.0.1:16001', splitSections(factsOutput));
    expect(facts).toMatchObject({
      vendorUniqueIdentifier: '127.0.0.1:16001',
      operatingSystem: 'Android',
      serialNumber: '28121FDH2000QM',
      model: 'Pixel 7',
      friendlyModel: 'Pixel 7',
      manufacturer: 'Google',
      operatingSystemVersion: '14',
      operatingSystemBuild: 'UQ1A.240205.004',
      productType: 'panther',
      hardwareModel: 'panther',
      formFactor: 'Phone',
      vendorDeviceName: 'Pixel 7',
      macAddress: 'F4:60:E2:3C:91:7A',
      bluetoothAddress: '5C:17:CF:8A:2B:11',
      batteryPercent: 22,
      batteryStatus: 'Charging',
      diskSpace: 115091928 * 1024,
      diskSpaceUsed: (115091928 - 51068440) * 1024,
    });
    expect(facts.properties).toHaveLength(S.GETPROP_PIXEL7.trim().split('\n').length);
    expect(facts.properties).toContainEqual({ name: 'ro.build.characteristics', value: 'nosdcard' });
  });

  it('falls back for serial and leaves unset values out', () => {
    const facts = factsFromOutput('emulator-5554', splitSections('@@getprop\n[ro.boot.serialno]: [BOOT1]\n@@devicename\nnull\n@@btaddr\nnull\n@@end\n'));
    expect(facts.serialNumber).toBe('BOOT1');
    expect(facts.vendorDeviceName).toBeUndefined();
    expect(facts.bluetoothAddress).toBeUndefined();
    expect(facts.batteryPercent).toBe(-1);
    expect(factsFromOutput('emulator-5554', splitSections('@@getprop\n@@end\n')).serialNumber).toBe('emulator-5554');
  });

  it('derives the form factor from characteristics or smallest width', () => {
    expect(deriveFormFactor('tablet,nosdcard', '', '')).toBe('Tablet');
    expect(deriveFormFactor('nosdcard', 'Physical size: 1600x2560', 'Physical density: 320')).toBe('Tablet');
    expect(deriveFormFactor('nosdcard', 'Physical size: 1080x2400', 'Physical density: 420')).toBe('Phone');
    expect(deriveFormFactor(undefined, '', '')).toBe('Unknown');
  });
});

describe('installed packages', () => {
  it('marks system packages and adds versionName for third-party ones', () => {
    const list = [
      '@@all',
      'package:/system/app/Settings/Settings.apk=com.android.settings versionCode:34',
      S.PM_LIST_THIRD.trim(),
      '@@third',
      S.PM_LIST_THIRD.trim(),
      '@@end',
    ].join('\n');
    const versions = `@@pkg:com.example.shop\n    versionCode=10402 minSdk=24 targetSdk=34\n    versionName=1.4.2\n@@pkg:org.mozilla.firefox\n@@end\n`;
    expect(packagesFromOutput(splitSections(list), splitSections(versions))).toEqual([
      { identifier: 'com.android.settings', version: '', buildVersion: '34', system: true },
      { identifier: 'com.example.shop', version: '1.4.2', buildVersion: '10402', system: false },
      { identifier: 'org.mozilla.firefox', version: '', buildVersion: '2016003655', system: false },
    ]);
    expect(versionScript(['com.a'])).toContain('dumpsys package com.a 2>/dev/null');
    expect(versionScript(["x'; reboot"])).toContain("dumpsys package 'x'\\''; reboot' 2>/dev/null");
  });
});
