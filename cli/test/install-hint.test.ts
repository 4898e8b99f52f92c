/**
 * The advice `devicelab install` adds to a failed install follows what the hub said went wrong: the texts here are
 * the hub's own (its provisioning and platform checks), not copies.
 */
import { wrongPlatform } from '../../hub/src/domain/app-platform';
import { assertInstallable } from '../../hub/src/domain/ios-provisioning';
import { installFailureHint } from '../src/commands/apps';

function refusal(check: () => void): string {
  try {
    check();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('the hub accepted the install');
}

const expiredApp = {
  operating_system: 'iOS', display_name: 'AppInfoDemo', provision_expiration_date: new Date('2017-07-27T09:44:49Z'),
  provisions_all_devices: false, provisioned_devices: ['18cf53cddee60c52f9c97b1521e7cbf8342628da'], minimum_os_version: '8.0',
} as const;
const iPhone = { name: 'Lab iPhone 01', vendor_unique_identifier: '18cf53cddee60c52f9c97b1521e7cbf8342628da', operating_system_version: '17.2.1' };

test('a profile problem: upload a build for this device, not --force', () => {
  const hint = installFailureHint(refusal(() => assertInstallable({ ...expiredApp, provisioned_devices: [...expiredApp.provisioned_devices] }, iPhone)));
  expect(hint).toMatch(/^Upload a build whose provisioning profile lists this device's UDID/);
  expect(hint).not.toMatch(/--force/);
});

test('a build for the wrong kind of device: upload the other build', () => {
  expect(installFailureHint(wrongPlatform.deviceBuildOnSimulator('AppInfoDemo'))).toMatch(/^Upload the build for that kind of device/);
  expect(installFailureHint(wrongPlatform.simulatorBuildOnDevice('LabSimApp'))).toMatch(/^Upload the build for that kind of device/);
});

test('a device in use: retain it first; anything else from the device: --force for a changed signature', () => {
  expect(installFailureHint("Device 'Pixel 7' is in use by 'bob@example.com'.")).toMatch(/^Retain the device first/);
  expect(installFailureHint('Failure [INSTALL_FAILED_UPDATE_INCOMPATIBLE: signatures do not match]')).toMatch(/--force/);
});
