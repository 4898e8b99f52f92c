/**
 * `/metrics` scraped from a whole lab (hub, gateway, simulated Android devices on the real adb server), as
 * Prometheus would: the series must agree with what the REST API says at the same moment.
 */
import { startTestLab, type TestLab } from '../support/lab';

const TOKEN = 'scrape-token-6f1e';
let lab: TestLab;

beforeAll(async () => {
  lab = await startTestLab({
    androidCount: 2, hubConfig: { metricsToken: TOKEN }, usbHub: {},
    gatewayOptions: { metricsListen: { host: '127.0.0.1', port: 0 } },
  });
}, 90_000);
afterAll(() => lab?.stop(), 60_000);

const scrape = async (token = TOKEN) => fetch(`${lab.hub.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });

/** Sample lines of one series as [labels, value]. */
function samples(text: string, name: string): { labels: Record<string, string>; value: number }[] {
  return text.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `)).map((line) => {
    const match = /^[^{ ]+(?:\{(.*)\})? (\S+)$/.exec(line)!;
    const labels = Object.fromEntries([...(match[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    return { labels, value: Number(match[2]) };
  });
}
const total = (text: string, name: string, where: Record<string, string> = {}) => samples(text, name)
  .filter((s) => Object.entries(where).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);

it('refuses a scraper without the token, and the raw URL never becomes a label', async () => {
  expect((await fetch(`${lab.hub.url}/metrics`)).status).toBe(401);
  expect((await scrape('wrong')).status).toBe(401);
  const res = await scrape();
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
});

it('an idle hub has no request waiting for a database connection: the scrape does not count its own queries', async () => {
  for (let i = 0; i < 3; i++) expect(total(await (await scrape()).text(), 'devicelab_db_pool_connections', { state: 'waiting' })).toBe(0);
});

it('hub and gateway each serve the standard process and Node.js series and their build', async () => {
  for (const [component, text] of [['hub', await (await scrape()).text()], ['gateway', await (await fetch(lab.gateway.metricsUrl!)).text()]]) {
    expect(samples(text, 'devicelab_build_info')).toEqual([{ labels: { component, version: '0.1.0', node: process.version }, value: 1 }]);
    expect(total(text, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(total(text, 'process_resident_memory_bytes')).toBeGreaterThan(10 * 1024 * 1024);
    expect(samples(text, 'nodejs_eventloop_lag_seconds')).toHaveLength(1);
    expect(samples(text, 'nodejs_heap_size_used_bytes')).toHaveLength(1);
  }
});

it('counts devices by gateway and availability as GET /Device shows them, and retains as they happen', async () => {
  const devices = await (await lab.api(lab.admin, '/Device')).json() as { availability: string; id: string }[];
  let text = await (await scrape()).text();
  const online = devices.filter((d) => d.availability === 'Online').length;
  expect(online).toBe(2);
  expect(total(text, 'devicelab_devices', { gateway: 'lab-gateway', availability: 'Online' })).toBe(online);
  expect(total(text, 'devicelab_devices')).toBe(devices.length);
  expect(total(text, 'devicelab_devices_retained')).toBe(0);
  expect(total(text, 'devicelab_link_sessions')).toBe(1);
  expect(total(text, 'devicelab_gateways', { connected: 'true' })).toBe(1);
  expect(total(text, 'devicelab_db_pool_connections', { state: 'total' })).toBeGreaterThan(0);

  const retained = await lab.api(lab.admin, `/Device?action=retain&id=${devices[0].id}`, { method: 'POST' });
  expect((await retained.json() as { isSuccess: boolean }).isSuccess).toBe(true);
  text = await (await scrape()).text();
  expect(total(text, 'devicelab_devices_retained')).toBe(1);

  await lab.api(lab.admin, `/Device?action=release&id=${devices[0].id}`, { method: 'POST' });
  text = await (await scrape()).text();
  expect(total(text, 'devicelab_devices_retained')).toBe(0);

  await lab.world.unplug(lab.devices[1].serial);
  await waitForSeries('devicelab_devices', { availability: 'Offline' }, 1);
  const now = await (await lab.api(lab.admin, '/Device')).json() as { availability: string }[];
  text = await (await scrape()).text();
  expect(total(text, 'devicelab_devices', { availability: 'Online' })).toBe(now.filter((d) => d.availability === 'Online').length);
  expect(total(text, 'devicelab_devices', { availability: 'Online' })).toBe(1);
});

it('times REST requests by route template and gateway commands by kind', async () => {
  const before = await (await scrape()).text();
  const routeCount = (text: string) => total(text, 'devicelab_http_request_duration_seconds_count',
    { route: '/apiv1/Device/Log', method: 'GET', status: '200' });
  const commandCount = (text: string) => total(text, 'devicelab_command_duration_seconds_count', { kind: 'readLog', outcome: 'ok' });
  const log = await lab.api(lab.admin, `/Device/Log?id=${lab.devices[0].serial}&lines=5`);
  expect((await log.json() as { isSuccess: boolean }).isSuccess).toBe(true);
  await lab.api(lab.admin, '/NoSuchThing/a1b2c3');
  const after = await (await scrape()).text();
  expect(routeCount(after) - routeCount(before)).toBe(1);
  expect(commandCount(after) - commandCount(before)).toBe(1);
  expect(after).not.toContain('a1b2c3');
  expect(total(after, 'devicelab_http_request_duration_seconds_count', { route: 'unmatched', status: '404' })).toBeGreaterThan(0);
});

it('the gateway serves its own devices, hub ports and uplink backlog on its own address', async () => {
  const res = await fetch(lab.gateway.metricsUrl!);
  expect(res.status).toBe(200);
  const text = await res.text();
  // What the gateway holds is what the hub shows for its Online devices.
  const devices = await (await lab.api(lab.admin, '/Device')).json() as { availability: string; operatingSystem: string }[];
  const online = devices.filter((d) => d.availability === 'Online');
  expect(online).toHaveLength(1); // the other was unplugged above
  const gatewaySide = samples(text, 'devicelab_gateway_devices').filter((s) => s.value > 0)
    .map((s) => [s.labels.os, s.labels.readiness, s.value]);
  // Readiness is not on the wire: the hub's own series (from its records) says it.
  const hubSide = samples(await (await scrape()).text(), 'devicelab_devices').filter((s) => s.labels.availability === 'Online')
    .map((s) => s.labels.readiness);
  expect(gatewaySide).toEqual([[online[0].operatingSystem, hubSide[0], 1]]);
  expect(hubSide).toEqual(['Ready']);
  expect(total(text, 'devicelab_gateway_usb_hub_ports', { hub: 'LABHUB01' })).toBe(8);
  expect(samples(text, 'devicelab_gateway_metrics_buffered_rows')).toHaveLength(1);
  expect((await fetch(lab.gateway.metricsUrl!.replace('/metrics', '/other'))).status).toBe(404);
});

it('the gateway counts failed device operations by platform and error code', async () => {
  const errors = async () => samples(await (await fetch(lab.gateway.metricsUrl!)).text(), 'devicelab_gateway_device_errors_total');
  // Earlier tests may have counted failures already (a command to a device switched off is on no platform): compare
  // each series with itself.
  const key = (labels: Record<string, string>) => JSON.stringify(labels);
  const before = new Map((await errors()).map((s) => [key(s.labels), s.value]));
  // Removing a package the phone does not have: adb's `pm uninstall` fails on the device.
  const res = await lab.api(lab.admin, `/Application?action=uninstallBundle&bundleId=com.example.absent&deviceId=${lab.devices[0].serial}`, { method: 'POST' });
  const result = await res.json() as { isSuccess: boolean; errorCode?: string };
  expect(result.isSuccess).toBe(false);
  const risen = (await errors()).map((s) => ({ ...s, value: s.value - (before.get(key(s.labels)) ?? 0) })).filter((s) => s.value !== 0);
  expect(risen).toEqual([{ labels: expect.objectContaining({ os: 'Android' }), value: 1 }]);
});

async function waitForSeries(name: string, where: Record<string, string>, value: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const text = await (await scrape()).text();
    if (total(text, name, where) === value) return;
    if (Date.now() > deadline) throw new Error(`${name} ${JSON.stringify(where)} never reached ${value}:\n${text}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
