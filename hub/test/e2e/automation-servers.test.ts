/**
 * Automation servers on the gateway: a real Appium 3 server per device (the UiAutomator2 driver) reached through
 * the hub's automation tunnels, restarted when it dies, gone when the gateway stops; its log per device and session;
 * the installation as GET /Service shows it.
 */
import { execFileSync } from 'node:child_process';
import http from 'node:http';
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

/** Appium servers (our spawned `node -e ... server`) listening on a port of this lab's gateway, by pid. */
function appiumPids(): number[] {
  const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  const port = String(lab.gateway.automation?.serverOf(androidDevice())?.port ?? -1);
  return out.split('\n').filter((line) => line.includes('DEVICELAB_APPIUM_PACKAGE_DIR') && line.includes(` --port ${port} `))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

/** The Android device's vendor unique identifier (its adb serial). */
function androidDevice(): string {
  return lab.gateway.drivers.snapshot().find((state) => state.operatingSystem === 'Android')!.vendorUniqueIdentifier;
}

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1 });
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
