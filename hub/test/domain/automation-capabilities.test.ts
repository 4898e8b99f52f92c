/**
 * New-session capabilities as the lab reads them: W3C merging, the legacy form, names in any case with or without
 * `appium:`, the product's deviceConnect* names, our devicelab: options, and the clean body the device's Appium
 * server gets.
 */
import { ApiFailure } from '@devicelab/shared';
import { gatewaySessionBody, readNewSessionRequest } from '../../src/domain/automation/capabilities';

const failureOf = (body: unknown): ApiFailure => {
  try {
    readNewSessionRequest(body);
  } catch (err) {
    if (err instanceof ApiFailure) return err;
    throw err;
  }
  throw new Error('expected a refusal');
};

test('W3C: alwaysMatch merged with each firstMatch, in order, each a candidate', () => {
  const request = readNewSessionRequest({ capabilities: {
    alwaysMatch: { 'appium:newCommandTimeout': 30, 'devicelab:queueTimeout': 12 },
    firstMatch: [{ platformName: 'iOS', 'appium:platformVersion': '17' }, { platformName: 'android', 'appium:deviceName': 'Pixel 7' }],
  } });
  expect(request.candidates.map((c) => c.criteria)).toEqual([
    { os: 'iOS', osVersion: '17', deviceName: undefined, id: undefined, formFactor: undefined, filterText: undefined },
    { os: 'Android', osVersion: undefined, deviceName: 'Pixel 7', id: undefined, formFactor: undefined, filterText: undefined },
  ]);
  expect(request.queueTimeoutMs).toBe(12_000);
  expect(request.candidates[1].newCommandTimeoutSeconds).toBe(30);
  expect(request.credentials).toBeUndefined();
});

test('a name in both alwaysMatch and firstMatch (whatever its case or prefix) is refused, as W3C says', () => {
  const failure = failureOf({ capabilities: { alwaysMatch: { platformName: 'Android' }, firstMatch: [{ PLATFORMNAME: 'iOS' }] } });
  expect(failure.code).toBe('INVALID_CAPABILITIES');
  expect(failure.message).toMatch(/both alwaysMatch and firstMatch/);
});

test('the product\'s legacy capabilities: desiredCapabilities, deviceConnect* in either spelling, automationName Appium', () => {
  const request = readNewSessionRequest({ desiredCapabilities: {
    platformName: 'Android', deviceConnectUsername: 'tester@example.com', deviceConnectApiKey: 'k-1',
    deviceConnectDevice: '0f3c3a52-1111-4222-8333-444455556666', deviceConnectSkipInstall: 'true', automationName: 'Appium',
    appPackage: 'com.example', noreset: true,
  } });
  expect(request.credentials).toEqual({ login: 'tester@example.com', apiKey: 'k-1' });
  expect(request.skipInstall).toBe(true);
  const [candidate] = request.candidates;
  expect(candidate.criteria.id).toBe('0f3c3a52-1111-4222-8333-444455556666');
  expect(gatewaySessionBody(candidate, 'Android')).toEqual({ capabilities: { firstMatch: [{}], alwaysMatch: {
    platformName: 'Android', 'appium:automationName': 'UiAutomator2', 'appium:appPackage': 'com.example',
    'appium:noReset': true, 'appium:newCommandTimeout': 60,
  } } });
  expect(readNewSessionRequest({ desiredCapabilities: { deviceConnectUserName: 'a', deviceConnectApiKey: 'b' } }).credentials)
    .toEqual({ login: 'a', apiKey: 'b' });
});

test('what the lab decides is never forwarded: the device, its ports, paths on the gateway, our own options', () => {
  const request = readNewSessionRequest({ capabilities: { alwaysMatch: {
    platformName: 'iOS', 'appium:udid': 'abc', 'appium:systemPort': 8200, 'appium:wdaLocalPort': 8100,
    'appium:chromedriverExecutable': '/bin/sh', 'appium:app': 'Calculator', 'devicelab:filter': 'minOs=16',
    'appium:automationName': 'XCUITest', 'sauce:options': { name: 'x' }, browserName: '',
  } } });
  expect(request.app).toBe('Calculator');
  expect(request.candidates[0].criteria).toMatchObject({ os: 'iOS', id: 'abc', filterText: 'minOs=16' });
  expect(gatewaySessionBody(request.candidates[0], 'iOS').capabilities.alwaysMatch).toEqual({
    platformName: 'iOS', 'appium:automationName': 'XCUITest', 'sauce:options': { name: 'x' }, browserName: '',
    'appium:newCommandTimeout': 60,
  });
});

test('defaults and caps: queue timeout 300 s, at most 900 s as the waiting line allows, newCommandTimeout 60 s, 0 kept', () => {
  const plain = readNewSessionRequest({ capabilities: { alwaysMatch: {} } });
  expect(plain.queueTimeoutMs).toBe(300_000);
  expect(plain.candidates[0].newCommandTimeoutSeconds).toBe(60);
  const long = readNewSessionRequest({ capabilities: { alwaysMatch: { 'devicelab:queueTimeout': 1e9, 'appium:newCommandTimeout': 0 } } });
  expect(long.queueTimeoutMs).toBe(900_000);
  expect(long.candidates[0].newCommandTimeoutSeconds).toBe(0);
});

test('bodies the lab cannot use are refused with a message that says why', () => {
  const cases: [unknown, RegExp][] = [
    [[], /JSON object/],
    ['text', /JSON object/],
    [{}, /neither "capabilities" nor "desiredCapabilities"/],
    [{ capabilities: [] }, /"capabilities" must be an object/],
    [{ capabilities: { firstMatch: [] } }, /non-empty list/],
    [{ capabilities: { firstMatch: Array.from({ length: 17 }, () => ({})) } }, /at most 16/],
    [{ capabilities: { firstMatch: [1] } }, /must be an object/],
    [{ capabilities: { alwaysMatch: { platformName: 'Windows' } } }, /Android or iOS/],
    [{ capabilities: { alwaysMatch: { platformName: { a: 1 } } } }, /must be a string/],
    [{ capabilities: { alwaysMatch: { 'devicelab:queueTimeout': -1 } } }, /seconds/],
    [{ capabilities: { alwaysMatch: { deviceConnectSkipInstall: 'maybe' } } }, /true or false/],
    [{ capabilities: { alwaysMatch: { deviceConnectUserName: 'only-the-user' } } }, /go together/],
  ];
  for (const [body, message] of cases) {
    const failure = failureOf(body);
    expect({ body, code: failure.code, message: failure.message }).toEqual({ body, code: 'INVALID_CAPABILITIES', message: expect.stringMatching(message) });
  }
});
