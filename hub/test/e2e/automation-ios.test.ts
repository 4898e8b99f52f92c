/**
 * iOS automation from a Linux gateway: the device's Appium server (XCUITest driver) reaches the WebDriverAgent
 * running on the simulated iPhone through the gateway's local forward over usbmuxd (webDriverAgentUrl); a session
 * is created and deleted through the hub's automation agent. nativeAutomation on iOS installs as usual and says so.
 */
import http from 'node:http';
import { buildZip, mobileProvision, xmlPlist } from '../apps/package-builder';
import { startTestLab, waitFor, type TestLab } from '../support/lab';

jest.setTimeout(300_000);

let lab: TestLab;

function appium(device: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const request = http.request({
      host: 'appium.invalid', method, path, agent: lab.hub.gateways.automationAgent(device),
      headers: payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {},
    }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(payload);
  });
}

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 0, iosCount: 1 });
});

afterAll(async () => {
  await lab?.stop();
});

test('an XCUITest session through the forwarded WebDriverAgent, created and deleted through the agent', async () => {
  const udid = lab.iosDevices[0].udid;
  const created = await appium(udid, 'POST', '/session', {
    capabilities: { alwaysMatch: { platformName: 'iOS', 'appium:newCommandTimeout': 120 }, firstMatch: [{}] },
  });
  expect(created.status).toBe(200);
  const { sessionId } = created.body.value;
  expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
  expect(lab.world.iosDevice(udid).wda.session).not.toBeNull();
  const source = await appium(udid, 'GET', `/session/${sessionId}/source`);
  expect(source.body.value).toContain('<XCUIElementTypeApplication');
  expect(await appium(udid, 'DELETE', `/session/${sessionId}`)).toEqual({ status: 200, body: { value: null } });
  await waitFor(async () => lab.world.iosDevice(udid).wda.session === null, 30_000, 'the WebDriverAgent session gone');
});

test('nativeAutomation=true on iOS installs as usual and the Result says there was nothing to prepare', async () => {
  const ipa = buildZip([
    { name: 'Payload/Automated.app/Info.plist', data: xmlPlist({
      CFBundleIdentifier: 'com.devicelab.automated', CFBundleName: 'Automated', CFBundleExecutable: 'Automated',
      CFBundleShortVersionString: '1.0', CFBundleVersion: '1', MinimumOSVersion: '15.0', UIDeviceFamily: [1, 2],
    }) },
    { name: 'Payload/Automated.app/embedded.mobileprovision', data: mobileProvision({
      Name: 'iOS Team Provisioning Profile: *', TeamIdentifier: ['ABCDE12345'], ProvisionsAllDevices: true,
      ExpirationDate: new Date(Date.now() + 365 * 86_400_000),
    }) },
  ]);
  const form = new FormData();
  form.append('upload', new Blob([ipa]), 'automated.ipa');
  const uploaded = await (await lab.api(lab.admin, '/Application?add&wait=true', { method: 'POST', body: form })).json() as any;
  expect(uploaded.isSuccess).toBe(true);
  const udid = lab.iosDevices[0].udid;
  const [device] = await (await lab.api(lab.admin, `/Device?AnyId=${udid}`)).json() as any[];
  const installed = await (await lab.api(lab.admin,
    `/Application?action=install&id=${uploaded.data.id}&deviceId=${device.id}&nativeAutomation=true&wait=true`, { method: 'POST' })).json() as any;
  expect(installed).toEqual({ isSuccess: true, nativeAutomation: expect.stringMatching(/^Nothing to prepare on iOS: WebDriverAgent automates any installed app/) });
  expect(lab.world.iosDevice(udid).apps.get('com.devicelab.automated')).toBeDefined();
});
