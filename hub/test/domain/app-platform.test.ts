/** Which iOS builds fit which devices: device builds on phones, simulator builds on simulators; old uploads unchecked. */
import { ApiFailure } from '@devicelab/shared';
import { assertPlatformFits, wrongPlatform } from '../../src/domain/app-platform';

const simulator = { properties: [{ name: 'Simulator', value: 'true' }] };
const phone = { properties: [{ name: 'Owner', value: 'QA' }] };
const app = (platform: string | null) => ({ platform, display_name: 'Demo' });

test('a device build installs on a phone, a simulator build on a simulator', () => {
  expect(() => assertPlatformFits(app('iphoneos'), phone)).not.toThrow();
  expect(() => assertPlatformFits(app('iphonesimulator'), simulator)).not.toThrow();
});

test('a device build offered to a simulator, and the reverse, fail with a text that says which build is needed', () => {
  expect(() => assertPlatformFits(app('iphoneos'), simulator)).toThrow(new ApiFailure(wrongPlatform.deviceBuildOnSimulator('Demo')));
  expect(() => assertPlatformFits(app('iphonesimulator'), phone)).toThrow(new ApiFailure(wrongPlatform.simulatorBuildOnDevice('Demo')));
  expect(wrongPlatform.deviceBuildOnSimulator('Demo')).toMatch(/built for iOS devices \(iphoneos\).*upload a simulator build/);
});

test('an upload from before the platform was recorded is not checked', () => {
  expect(() => assertPlatformFits(app(null), simulator)).not.toThrow();
  expect(() => assertPlatformFits(app(null), phone)).not.toThrow();
});
