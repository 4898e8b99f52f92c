/** The install checks an IPA's metadata decides before any byte moves (UDID, expiry, MinimumOSVersion). */
import { ApiFailure } from '@devicelab/shared';
import { assertInstallable, compareVersions, provisioningProblems } from '../../src/domain/ios-provisioning';

const NOW = new Date('2026-11-24T12:00:00Z');
const UDID = '00008110-001A2C3E0E38801E';
const app = {
  operating_system: 'iOS', display_name: 'Demo', provision_expiration_date: new Date('2027-01-01T00:00:00Z'),
  provisions_all_devices: false, provisioned_devices: [UDID.toLowerCase()], minimum_os_version: '16.0',
};
const device = { name: 'Lab iPhone 01', vendor_unique_identifier: UDID, operating_system_version: '17.2.1' };

it('passes a profile that lists the UDID (any case), has not expired, for an iOS the device runs', () => {
  expect(provisioningProblems(app, device, NOW)).toEqual([]);
  expect(() => assertInstallable(app, device, NOW)).not.toThrow();
});

it('names every reason with the UDID, the dates and the versions', () => {
  const problems = provisioningProblems({
    ...app, provisioned_devices: ['abc'], provision_expiration_date: new Date('2017-07-27T09:44:49Z'), minimum_os_version: '17.4',
  }, device, NOW);
  expect(problems).toEqual([
    `its provisioning profile does not provision this device (UDID ${UDID} is not one of the profile's 1 ProvisionedDevices, and the profile does not provision all devices)`,
    'its provisioning profile expired on 2017-07-27T09:44:49Z (now 2026-11-24T12:00:00Z)',
    'it needs iOS 17.4 or later (MinimumOSVersion) and the device runs iOS 17.2.1',
  ]);
  expect(() => assertInstallable({ ...app, minimum_os_version: '18' }, device, NOW)).toThrow(new ApiFailure(
    "Application 'Demo' cannot be installed on device 'Lab iPhone 01': it needs iOS 18 or later (MinimumOSVersion) and the device runs iOS 17.2.1."));
});

it('a profile for all devices, an app without a device list and an Android app are not checked against the UDID', () => {
  expect(provisioningProblems({ ...app, provisions_all_devices: true, provisioned_devices: [] }, device, NOW)).toEqual([]);
  expect(provisioningProblems({ ...app, provisioned_devices: null }, device, NOW)).toEqual([]);
  expect(provisioningProblems({ ...app, operating_system: 'Android', provisioned_devices: [] }, device, NOW)).toEqual([]);
});

it('compares dotted versions numerically; unreadable versions are not checked', () => {
  expect(compareVersions([17, 2, 1], [17, 10])).toBeLessThan(0);
  expect(compareVersions([17], [17, 0, 0])).toBe(0);
  expect(provisioningProblems({ ...app, minimum_os_version: '17.2.1' }, device, NOW)).toEqual([]);
  expect(provisioningProblems({ ...app, minimum_os_version: 'latest' }, device, NOW)).toEqual([]);
  expect(provisioningProblems(app, { ...device, operating_system_version: null }, NOW)).toEqual([]);
});
