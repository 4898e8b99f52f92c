#!/usr/bin/env node
// `npm run demo`: the whole lab on one machine with no database server: embedded PostgreSQL, the hub, one
// gateway and a simulated lab (labsim) whose Android devices speak the real adb protocol to a private adb
// server and whose iOS devices answer a simulated usbmuxd. Ctrl-C (or SIGTERM) stops everything it started: gateway, adb server, simulators, PostgreSQL, in that
// order: the demo runs in a process group of its own, so the terminal's Ctrl-C reaches only this process.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { startHub, hubConfigFromEnv, inOwnProcessGroup, onShutdown, rotateUserToken } = require(path.join(root, 'hub/dist'));
const { startGateway, usbHubsConfigFromEnv } = require(path.join(root, 'gateway/dist'));
const { LabWorld, addDemoHubs, createFakeXcrun, parseSimMix, stablePort, startControlApi } = require(path.join(root, 'labsim/dist'));

await inOwnProcessGroup();

const say = (text) => process.stdout.write(`${text}\n`);
const config = hubConfigFromEnv();
// The demo's link port is private to this process unless asked for.
if (!process.env.DEVICELAB_LINK_PORT) config.linkPort = 0;
// A demo serves this machine only, unless asked otherwise (it prints a loopback URL).
if (!process.env.DEVICELAB_HOST) config.host = '127.0.0.1';

/** The gateway's Prometheus address: `DEVICELAB_GATEWAY_METRICS_LISTEN`, else a free loopback port. */
function gatewayMetricsListen(text) {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text?.trim() ?? '');
  return match ? { host: match[1] ?? match[2], port: Number(match[3]) } : { host: '127.0.0.1', port: 0 };
}

const stops = [];
async function stopAll() {
  say('\nstopping the lab ...');
  for (const stop of stops.splice(0).reverse()) {
    try { await stop(); } catch (err) { process.stderr.write(`stop failed: ${err?.message ?? err}\n`); }
  }
}
onShutdown(stopAll);

/** Waits until the hub lists `count` devices Online, so the `curl` printed below shows them. */
async function waitForSimulatedDevicesOnline(db, count, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const online = await db.selectFrom('devices').select('id').where('availability', '=', 'Online').execute();
    if (online.length >= count) return;
    if (Date.now() > deadline) {
      say(`(only ${online.length} of ${count} simulated devices Online after ${timeoutMs / 1000} s; the rest may follow)`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

try {
  say(`starting the hub (data in ${config.dataDir}) ...`);
  // An embedded PostgreSQL that died and could not be restarted: stop the whole lab and fail.
  const hub = await startHub(config, undefined, { onRecordsStoreLost: () => void stopAll().finally(() => process.exit(1)) });
  stops.push(() => hub.stop());

  // The first iPhone has a UDID the development profile of the fixture app-info-iphone.ipa lists (README "iOS devices").
  const mix = parseSimMix(process.env.DEVICELAB_SIM || 'android=4,ios=2,udid=18cf53cddee60c52f9c97b1521e7cbf8342628da');
  const world = new LabWorld({ stateDir: path.join(config.dataDir, 'labsim') });
  await world.start();
  stops.push(() => world.stop());
  // Stable ports keep each simulated device's adb serial, so its record and Guid survive a demo restart.
  for (const spec of mix.android) await world.addAndroidDevice(spec, { port: await stablePort(spec.serial) });
  // iOS devices sit behind the lab's simulated usbmuxd; this host pairs with each, as an operator would once.
  let paired = 0;
  for (const spec of mix.ios) {
    await world.addIosDevice(spec);
    await world.iosFleet.pairWithIdevicepair(spec.udid).then(() => { paired += 1; }, (err) => {
      say(`(${spec.deviceName} stays Unauthorized: ${err.message}; apt-get install libimobiledevice-utils)`);
    });
  }
  // The devices hang from simulated Cambrionix hubs the gateway drives through a pseudo-terminal (needs socat).
  const demoHubs = await addDemoHubs(world, path.join(config.dataDir, 'labsim'),
    [...mix.android.map((spec) => spec.serial), ...mix.ios.map((spec) => spec.udid)]);
  if (!demoHubs) say('(socat not found: the simulated USB hub is left out; apt-get install socat)');
  const control = await startControlApi(world, Number(process.env.DEVICELAB_SIM_PORT || 0));
  stops.push(() => control.close());

  // iOS simulators (`simulator=2`) come from labsim's fake xcrun, as XCRUN_BINARY would on a Mac gateway.
  const xcrun = mix.simulators ? createFakeXcrun(path.join(config.dataDir, 'labsim', 'xcode')) : undefined;
  const gatewayName = process.env.DEVICELAB_GATEWAY_NAME || 'demo-gateway';
  const gateway = await startGateway({
    name: gatewayName,
    token: await hub.registerGateway(gatewayName),
    hubAddress: `127.0.0.1:${hub.linkPort}`,
    cacheDir: path.join(config.dataDir, 'gateway-cache'),
    adbPort: world.adbServerPort,
    usbmuxdAddress: world.env().USBMUXD_SOCKET_ADDRESS,
    xcrunBinary: xcrun?.binary,
    simulators: mix.simulators ? [{ kind: 'create', deviceType: 'iPhone 15', platform: 'iOS', version: '17.5', count: mix.simulators }] : [],
    // The gateway's own address; it has no single public port (each retained device's adb endpoint has its own).
    publicAddress: '127.0.0.1',
    publicPort: 0,
    metricsListen: gatewayMetricsListen(process.env.DEVICELAB_GATEWAY_METRICS_LISTEN),
    usbHubs: demoHubs && {
      ...usbHubsConfigFromEnv(process.env), cambrionix: demoHubs.paths.map((p) => ({ path: p })), portMap: demoHubs.portMap,
    },
  });
  stops.push(() => gateway.stop());
  await waitForSimulatedDevicesOnline(hub.db, mix.android.length + paired + mix.simulators);

  // The hub prints a generated admin token only once; the demo hands out a fresh one at every start instead
  // (set DEVICELAB_ADMIN_TOKEN to keep a fixed one for scripts).
  const token = config.adminToken ?? hub.adminToken ?? await rotateUserToken(hub.db, 'admin');
  say('');
  say(`DeviceLab is running: ${hub.url}/apiv1`);
  say(`  dashboard: ${hub.url}/  (sign in with the login and token below)`);
  say(`  login:  admin`);
  say(`  token:  ${token}`);
  say(`  try:    curl -u admin:${token} ${hub.url}/apiv1/Device`);
  say(`  Appium: ${hub.url.replace('://', `://admin:${token}@`)}/Appium  (WebDriver; README "Run an Appium suite against the lab")`);
  say('  live screen: retain a device in the dashboard and open it (README "Live screen")');
  say(`  simulated lab: ${mix.android.length} Android and ${mix.ios.length} iOS devices${mix.simulators ? `, ${mix.simulators} iOS simulators` : ''}; control API ${control.url} (GET /devices)`);
  say(`  gateway metrics: ${gateway.metricsUrl}${config.metricsToken ? ` (hub: ${hub.url}/metrics with the bearer token)` : ''}`);
  if (xcrun) say(`  fake Xcode: XCRUN_BINARY=${xcrun.binary} (xcrun simctl list devices)`);
  if (mix.ios.length) say(`  simulated usbmuxd: USBMUXD_SOCKET_ADDRESS=${world.env().USBMUXD_SOCKET_ADDRESS} (idevice_id -l, ideviceinfo, ...)`);
  if (demoHubs) say(`  USB hubs: ${demoHubs.hubs.map((h) => h.serial).join(', ')} (curl -u admin:${token} ${hub.url}/apiv1/Gateway)`);
  say('Ctrl-C stops everything.');
} catch (err) {
  process.stderr.write(`demo failed: ${err?.stack ?? err}\n`);
  await stopAll();
  process.exit(1);
}
