/**
 * The advice `devicelab install` adds to a failed install follows the failure's code: the codes here are the ones
 * the hub's own checks (provisioning, platform, retain) put on their failures, not copies.
 */
import type { ApiFailure, FailureCode } from '@devicelab/shared';
import { assertPlatformFits } from '../../hub/src/domain/app-platform';
import { assertInstallable } from '../../hub/src/domain/ios-provisioning';
import { installFailureHint } from '../src/commands/apps';

function refusalCode(check: () => void): FailureCode | undefined {
  try {
    check();
  } catch (err) {
    return (err as ApiFailure).code;
  }
  throw new Error('the hub accepted the install');
}

const expiredApp = {
  operating_system: 'iOS', display_name: 'AppInfoDemo', provision_expiration_date: new Date('2017-07-27T09:44:49Z'),
  provisions_all_devices: false, provisioned_devices: ['18cf53cddee60c52f9c97b1521e7cbf8342628da'], minimum_os_version: '8.0',
} as const;
const iPhone = { name: 'Lab iPhone 01', vendor_unique_identifier: '18cf53cddee60c52f9c97b1521e7cbf8342628da', operating_system_version: '17.2.1' };

test('a profile problem: upload a build for this device, not --force', () => {
  const hint = installFailureHint(refusalCode(() => assertInstallable({ ...expiredApp, provisioned_devices: [...expiredApp.provisioned_devices] }, iPhone)));
  expect(hint).toMatch(/^Upload a build whose provisioning profile lists this device's UDID/);
  expect(hint).not.toMatch(/--force/);
});

test('a build for the wrong kind of device: upload the other build', () => {
  const simulator = { properties: [{ name: 'Simulator', value: 'true' }] } as Parameters<typeof assertPlatformFits>[1];
  expect(installFailureHint(refusalCode(() => assertPlatformFits({ platform: 'iphoneos', display_name: 'AppInfoDemo' }, simulator))))
    .toMatch(/^Upload the build for that kind of device/);
  expect(installFailureHint(refusalCode(() => assertPlatformFits({ platform: 'iphonesimulator', display_name: 'LabSimApp' }, { properties: [] }))))
    .toMatch(/^Upload the build for that kind of device/);
});

test('a device in use: retain it first; the device out of storage: free space; a changed signature: --force', () => {
  expect(installFailureHint('DEVICE_IN_USE')).toMatch(/^Retain the device first/);
  expect(installFailureHint('INSTALL_FAILED_INSUFFICIENT_STORAGE')).toMatch(/out of storage/);
  expect(installFailureHint('INSTALL_FAILED_UPDATE_INCOMPATIBLE')).toMatch(/--force/);
});

test('an install the lab could not record: the app is on the device, install again; not --force', () => {
  const hint = installFailureHint('RECORD_FAILED');
  expect(hint).toMatch(/^The app is on the device, but the lab's record of it lagged: install again/);
  expect(hint).not.toMatch(/--force/);
});
