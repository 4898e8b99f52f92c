/**
 * Automation servers on the gateway: a real Appium 3 server per device (the UiAutomator2 driver) reached through
 * the hub's automation tunnels, restarted when it dies, gone when the gateway stops; its log per device and session;
 * the installation as GET /Service shows it.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { fixture } from '../../../scripts/jest/shared-files';
import { APPIUM_CHILD_MARK } from '../../../gateway/src/automation/appium-child';
import { GatewayUnavailableError } from '../../src/gateways/gateway-directory';
import { isProcessAlive } from '../../src/store/process-liveness';
import { startTestLab, waitFor, type TestLab } from '../support/lab';

jest.setTimeout(240_000);

let lab: TestLab;

/** One HTTP request to the device's Appium server through the hub's automation agent. */
function appium(device: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const request = http.request({
      host: 'appium.invalid', method, path, agent: lab.hub.gateways.automationAgent(device),
      headers: { ...headers, ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}) },
    }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) });
        } catch {
          resolve({ status: response.statusCode ?? 0, body: text });
        }
      });
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(payload);
  });
}

/** Processes of the gateway's Appium children serving this port (the server and anything in its arguments). */
function appiumProcesses(port: number): number[] {
  const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  return out.split('\n').filter((line) => line.includes(APPIUM_CHILD_MARK) && line.includes(` --port ${port} `))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

const alive = isProcessAlive;

/** The first Android device's vendor unique identifier (its adb serial). */
function androidDevice(): string {
  return lab.world.device(lab.devices[0].serial).adbSerial;
}

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 2, gatewayOptions: { automation: { healthIntervalMs: 5_000 } } });
});

afterAll(async () => {
  await lab?.stop();
});

test('GET /status through the automation agent reaches the device\'s Appium server', async () => {
  const device = androidDevice();
  const status = await appium(device, 'GET', '/status');
  expect(status.status).toBe(200);
  expect(status.body.value).toMatchObject({ ready: true, build: { version: '3.8.0' } });
  // The same kept-alive tunnel answers the next request.
  const again = await appium(device, 'GET', '/status');
  expect(again.body.value.ready).toBe(true);
});

test('the agent reuses tunnels, opens at most 8 at once per device and keeps at most 2 idle', async () => {
  const device = androidDevice();
  const agent = lab.hub.gateways.automationAgent(device);
  expect(lab.hub.gateways.automationAgent(device)).toBe(agent);
  const count = (pool: NodeJS.ReadOnlyDict<unknown[]>) => Object.values(pool).reduce((n, list) => n + (list?.length ?? 0), 0);
  let most = 0;
  const watch = setInterval(() => { most = Math.max(most, count(agent.sockets)); }, 5);
  const answers = await Promise.all(Array.from({ length: 20 }, () => appium(device, 'GET', '/status')));
  clearInterval(watch);
  expect(answers.every((answer) => answer.body.value.ready === true)).toBe(true);
  expect(most).toBeGreaterThan(1);
  expect(most).toBeLessThanOrEqual(8);
  expect(count(agent.freeSockets)).toBeLessThanOrEqual(2);
  const sockets = new Set<unknown>();
  for (let i = 0; i < 3; i++) {
    await new Promise<void>((resolve, reject) => {
      http.get({ host: 'appium.invalid', path: '/status', agent }, (response) => {
        sockets.add(response.socket);
        response.resume();
        response.on('end', () => resolve());
      }).on('error', reject);
    });
  }
  expect(sockets.size).toBe(1);
});

test('the server is started again after it is killed (kill -9), and answers through the agent', async () => {
  const device = androidDevice();
  const server = lab.gateway.automation!.serverOf(device)!;
  const killed = server.pid!;
  process.kill(killed, 'SIGKILL');
  await waitFor(async () => !alive(killed) && server.pid !== killed && server.state === 'ready', 120_000, 'the server started again');
  expect(server.spawns).toBe(2);
  expect(appiumProcesses(server.port)).toEqual([server.pid]);
  const status = await appium(device, 'GET', '/status');
  expect(status.body.value.ready).toBe(true);
});

test('a hung server (its process stopped, its HTTP silent) is killed after three unanswered status probes and started again', async () => {
  const device = androidDevice();
  const server = lab.gateway.automation!.serverOf(device)!;
  const hung = server.pid!;
  const spawns = server.spawns;
  process.kill(hung, 'SIGSTOP');
  await waitFor(async () => !alive(hung) && server.pid !== hung && server.state === 'ready', 180_000, 'the hung server replaced');
  expect(server.spawns).toBe(spawns + 1);
  expect((await appium(device, 'GET', '/status')).body.value.ready).toBe(true);
});

test('automationLog: the device\'s Appium JSON lines, all or only those of one request', async () => {
  const device = androidDevice();
  const requestId = `devicelab-test-${Date.now()}`;
  await appium(device, 'GET', '/sessions', undefined, { 'x-request-id': requestId });
  const all = await lab.hub.gateways.automationLog(device, {});
  const lines = all.trim().split('\n').map((line) => JSON.parse(line));
  expect(lines.some((line) => /Welcome to Appium v3\.8\.0/.test(line.message))).toBe(true);
  expect(lines.some((line) => line.context?.requestId === requestId)).toBe(true);
  const picked = (await lab.hub.gateways.automationLog(device, { requestId })).trim().split('\n').map((line) => JSON.parse(line));
  expect(picked.length).toBeGreaterThan(0);
  expect(picked.length).toBeLessThan(lines.length);
  for (const line of picked) expect(line.context.requestId).toBe(requestId);
  expect(picked.map((line) => line.message).join('\n')).toMatch(/GET \/sessions/);
  expect(await lab.hub.gateways.automationLog(device, { sessionId: 'no-such-session' })).toBe('');
});

test('a UiAutomator2 session is created with the device\'s default capabilities and deleted through the agent; its log lines by session', async () => {
  const device = androidDevice();
  const requestId = `devicelab-create-${Date.now()}`;
  const created = await appium(device, 'POST', '/session', {
    capabilities: { alwaysMatch: { platformName: 'Android', 'appium:newCommandTimeout': 120 }, firstMatch: [{}] },
  }, { 'x-request-id': requestId });
  expect(created.status).toBe(200);
  const { sessionId, capabilities } = created.body.value;
  expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
  const block = lab.gateway.automation!.serverOf(device)!.port;
  expect(capabilities).toMatchObject({ udid: device, systemPort: block + 1, mjpegServerPort: block + 2, chromedriverPort: block + 3 });
  const source = await appium(device, 'GET', `/session/${sessionId}/source`);
  expect(source.body.value).toMatch(/<hierarchy /);
  const sessionLines = (await lab.hub.gateways.automationLog(device, { sessionId })).trim().split('\n').map((line) => JSON.parse(line));
  expect(sessionLines.length).toBeGreaterThan(0);
  for (const line of sessionLines) expect(line.context.sessionId).toBe(sessionId);
  expect(sessionLines.map((line) => line.message).join('\n')).toContain(`GET /session/${sessionId}/source`);
  // The create request's lines came before Appium knew the session id; they are the request's.
  const createLines = (await lab.hub.gateways.automationLog(device, { requestId })).trim().split('\n');
  expect(createLines.length).toBeGreaterThan(sessionLines.length / 10);
  const deleted = await appium(device, 'DELETE', `/session/${sessionId}`);
  expect(deleted).toEqual({ status: 200, body: { value: null } });
  const gone = await appium(device, 'GET', `/session/${sessionId}/source`);
  expect([gone.status, gone.body.value.error]).toEqual([404, 'invalid session id']);
});

test('GET /Service shows the gateway\'s Appium version and drivers', async () => {
  const { value: gateway } = await waitFor(async () => {
    const info = await (await lab.api(lab.admin, '/Service')).json() as any;
    const [first] = info.deviceGatewayInformation;
    return first?.automation?.length ? first : undefined;
  }, 60_000, 'the gateway\'s automation report');
  expect(gateway.automation).toEqual([{
    path: expect.any(String), version: '3.8.0', pathHash: expect.stringMatching(/^[0-9a-f]{64}$/),
    drivers: expect.arrayContaining([{ name: 'uiautomator2', version: '8.7.0' }, { name: 'xcuitest', version: '12.13.1' }]),
  }]);
  expect(gateway.appium).toEqual([{ path: gateway.automation[0].path, version: '3.8.0', patchHash: gateway.automation[0].pathHash }]);
  expect(gateway.automationConfigurationError).toBeUndefined();
  expect(lab.hub.gateways.automationInfo()).toEqual([expect.objectContaining({ gatewayName: 'lab-gateway', version: '3.8.0', configurationError: '' })]);
});

test('an automation tunnel to a device that has no server (not Ready) is refused by the gateway', async () => {
  const spec = lab.devices[1];
  await lab.world.setUnauthorized(spec.serial, true);
  const id = lab.world.device(spec.serial).adbSerial;
  await waitFor(async () => lab.gateway.drivers.snapshot()
    .some((state) => state.vendorUniqueIdentifier === id && state.readiness === 'Unauthorized'), 60_000, 'the device Unauthorized');
  const refused = lab.hub.gateways.openTunnel({ vendorUniqueIdentifier: id, remoteAddress: '', userLogin: '', service: 'automation' }, 30_000);
  await expect(refused).rejects.toThrow(GatewayUnavailableError);
  await expect(refused).rejects.toThrow(/refuses the connection: device .* has no automation server here: the device is not Ready/);
  expect(lab.gateway.automation!.serverOf(id)).toBeUndefined();
  await expect(appium(id, 'GET', '/status')).rejects.toThrow(/not Ready/);
});

test('nativeAutomation=true on Android grants the app\'s runtime permissions at install (pm install -g), and says so', async () => {
  const form = new FormData();
  form.append('upload', new Blob([readFileSync(fixture('ContactManager.apk'))]), 'ContactManager.apk');
  const uploaded = await (await lab.api(lab.admin, '/Application?add&wait=true', { method: 'POST', body: form })).json() as any;
  expect(uploaded.isSuccess).toBe(true);
  const spec = lab.devices[0];
  const devices = await (await lab.api(lab.admin, '/Device')).json() as { id: string; serialNumber?: string }[];
  const deviceId = devices.find((d) => d.serialNumber === spec.serial)!.id;
  const install = async (query: string) => (await lab.api(lab.admin,
    `/Application?action=install&id=${uploaded.data.id}&deviceId=${deviceId}&wait=true${query}`, { method: 'POST' })).json();
  const permissions = async () => {
    const { stdout } = await lab.world.device(spec.serial).runTool('dumpsys', ['package', uploaded.data.applicationIdentifier]);
    return stdout.split('\n').filter((line) => /android\.permission\.(READ|WRITE)_CONTACTS: granted=/.test(line)).map((line) => line.trim().split(',')[0]);
  };
  expect(await install('')).toEqual({ isSuccess: true });
  expect(await permissions()).toEqual(['android.permission.READ_CONTACTS: granted=false', 'android.permission.WRITE_CONTACTS: granted=false']);
  expect(await install('&nativeAutomation=true')).toEqual({ isSuccess: true, nativeAutomation: expect.stringMatching(/runtime permissions were granted at install \(pm install -g\)/) });
  expect(await permissions()).toEqual(['android.permission.READ_CONTACTS: granted=true', 'android.permission.WRITE_CONTACTS: granted=true']);
});

test('stopping the gateway leaves no Appium process behind', async () => {
  const server = lab.gateway.automation!.serverOf(androidDevice())!;
  const { port } = server;
  const pid = server.pid!;
  expect(appiumProcesses(port)).toEqual([pid]);
  await lab.stopGateway();
  expect(alive(pid)).toBe(false);
  expect(appiumProcesses(port)).toEqual([]);
});
