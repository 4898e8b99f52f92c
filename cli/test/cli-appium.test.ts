/**
 * `devicelab appium` (the built binary) against a real lab with the real Appium server on the gateway: it prints
 * the endpoint and the capabilities of a filter (the token only when asked), and runs a suite with
 * DEVICELAB_APPIUM_URL and DEVICELAB_APPIUM_CAPABILITIES set, whose session retains a device and gives it back.
 */
import { startTestLab, type TestLab } from '../../hub/test/support/lab';
import { cliEnvironment, deviceState, runCli, type CliUser } from './support/cli-process';

jest.setTimeout(240_000);

let lab: TestLab;
let tester: CliUser;

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1 });
  tester = await lab.addUser('appium-cli@example.com', ['Tester']);
}, 120_000);
afterAll(async () => lab?.stop(), 60_000);

test('prints the endpoint and the capabilities for a filter, the token masked unless --show-token', async () => {
  const result = await runCli(['appium', '--filter', 'os=android,minOs=10', '--wait', '2m', '--json'], cliEnvironment(lab, tester));
  expect(result.code).toBe(0);
  const printed = JSON.parse(result.stdout) as { url: string; endpoint: string; capabilities: Record<string, unknown>; capabilitiesWithCredentials: Record<string, unknown> };
  expect(printed.endpoint).toBe(`${lab.hub.url}/Appium`);
  expect(printed.url).toBe(`${lab.hub.url.replace('://', `://${encodeURIComponent(tester.login)}:%3Ctoken%3E@`)}/Appium`);
  expect(printed.capabilities).toEqual({ 'devicelab:filter': 'os=android,minOs=10', 'devicelab:queueTimeout': 120 });
  expect(printed.capabilitiesWithCredentials).toMatchObject({ 'appium:deviceConnectUserName': tester.login, 'appium:deviceConnectApiKey': '<token>' });
  expect(result.stdout).not.toContain(tester.token);
  const shown = await runCli(['appium', '--show-token', '--json'], cliEnvironment(lab, tester));
  expect(shown.stdout).toContain(tester.token);
});

/** A suite in one line: a session from the URL and capabilities, the page source, delete; prints what it saw. */
const SUITE = `
const http = require('http');
const url = new URL(process.env.DEVICELAB_APPIUM_URL);
const auth = decodeURIComponent(url.username) + ':' + decodeURIComponent(url.password);
const call = (method, path, body) => new Promise((resolve, reject) => {
  const req = http.request({ host: url.hostname, port: url.port, method, path: url.pathname + path, auth,
    headers: { 'content-type': 'application/json' } }, (res) => { let t = ''; res.on('data', (c) => t += c); res.on('end', () => resolve(JSON.parse(t))); });
  req.on('error', reject); req.end(body ? JSON.stringify(body) : undefined);
});
(async () => {
  const caps = { platformName: 'Android', ...JSON.parse(process.env.DEVICELAB_APPIUM_CAPABILITIES) };
  const created = await call('POST', '/session', { capabilities: { alwaysMatch: caps } });
  const id = created.value.sessionId;
  const source = await call('GET', '/session/' + id + '/source');
  console.log('source has hierarchy: ' + source.value.includes('<hierarchy'));
  await call('DELETE', '/session/' + id);
})().catch((err) => { console.error(err); process.exit(3); });
`;

test('runs a suite with the endpoint in its environment; its session retains a device and gives it back', async () => {
  const result = await runCli(['appium', '--filter', 'os=android', '--', process.execPath, '-e', SUITE], cliEnvironment(lab, tester));
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  expect(result.stdout).toBe('source has hierarchy: true\n');
  expect((await deviceState(lab, lab.devices[0].serial)).retainedById).toBeUndefined();
  // The session was the tester's: the device's history says so.
  const history = await (await lab.api(lab.admin, `/Report/History?deviceId=${(await deviceState(lab, lab.devices[0].serial)).id}`)).json() as { events: { message: string; performedByName: string }[] };
  expect(history.events.filter((e) => e.performedByName === tester.login).map((e) => e.message)).toEqual(expect.arrayContaining(['Device Retained', 'Device Released']));
});
