#!/usr/bin/env node
// A gateway process whose devices are synthetic: the gateway's real hub link (`HubLink`, `DriverRegistry`) fed by
// a driver that reports BENCH_DEVICES Ready Android devices at once, each with BENCH_PROPERTIES properties and
// BENCH_PACKAGES installed packages. For lab-scale benchmarks of the hub, where simulating the devices' own
// protocols would only load the machine. Environment as the real gateway (DEVICELAB_GATEWAY_NAME,
// DEVICELAB_GATEWAY_TOKEN, DEVICELAB_HUB, DEVICELAB_GATEWAY_CACHE). Prints `synthetic gateway: connected` once
// its session with the hub is verified. Retains get the gateway's real adb access endpoints (a listener per
// retained device, kept from retain to retain, on ports BENCH_ACCESS_PORTS, default 47400-47999), as a real gateway
// answers a device's first retain with its endpoint (the hub waits for that answer, and names the kept port at once
// afterwards); nothing connects to them here, so no adb server is needed.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { AppCache, DriverRegistry, HubLink } = require(path.join(root, 'gateway/dist'));
const { AdbAccessEndpoints } = require(path.join(root, 'gateway/dist/access/adb-access-endpoints.js'));
const Adb = require(require.resolve('@devicefarmer/adbkit', { paths: [path.join(root, 'gateway')] })).default;
const { createLogger } = require(path.join(root, 'shared/dist'));

const count = Number(process.env.BENCH_DEVICES || 1000);
const propertyCount = Number(process.env.BENCH_PROPERTIES || 60);
const packageCount = Number(process.env.BENCH_PACKAGES || 40);

/** A device as the Android driver reports it, with plausible facts; `i` makes it unique. */
function deviceState(i) {
  const serial = `SYN${String(i).padStart(5, '0')}`;
  return {
    vendorUniqueIdentifier: serial, operatingSystem: 'Android', readiness: 'Ready', serialNumber: serial,
    model: `Pixel ${i % 9}`, manufacturer: 'Google', friendlyModel: `Google Pixel ${i % 9}`,
    operatingSystemVersion: `1${i % 5}`, operatingSystemBuild: `UQ1A.${240000 + i}.001`, productType: `sdk_${i % 9}`,
    hardwareModel: 'ranchu', deviceClass: 'phone', formFactor: 'Phone', vendorDeviceName: `synthetic-${i}`,
    macAddress: `02:00:00:${[i >> 16, i >> 8, i].map((b) => (b & 255).toString(16).padStart(2, '0')).join(':')}`,
    bluetoothAddress: '', usbLocation: `1-${1 + (i % 8)}.${1 + (i % 4)}`, usbHubSerialNumber: '', usbHubPortNumber: 0,
    batteryPercent: 40 + (i % 60), batteryStatus: 'Charging', diskSpace: 64_000_000_000, diskSpaceUsed: 20_000_000_000 + i,
    properties: Array.from({ length: propertyCount }, (_, p) => ({
      name: `ro.synthetic.property.${p}`, value: `value-${p}-of-device-${i}-${'x'.repeat(p % 20)}`,
    })),
    packages: Array.from({ length: packageCount }, (_, p) => ({
      identifier: `com.synthetic.app${p}`, version: `1.${p}.0`, buildVersion: `${100 + p}`, system: p < packageCount / 2,
    })),
    readinessDetail: '',
  };
}

class SyntheticDriver {
  operatingSystem = 'Android';
  appFileExtension = '.apk';
  states = Array.from({ length: count }, (_, i) => deviceState(i));
  async start(listener) { for (const state of this.states) listener.deviceChanged(state); }
  snapshot() { return this.states; }
  async stop() {}
  async install(id) { return this.stateOf(id); }
  async uninstall(id) { return this.stateOf(id); }
  async readPackages(id) { return this.stateOf(id); }
  async launch() { return 'Status: ok'; }
  async reboot() {}
  async readLog() { return ''; }
  stateOf(id) { return this.states.find((s) => s.vendorUniqueIdentifier === id); }
}

const env = process.env;
const drivers = new DriverRegistry([new SyntheticDriver()]);
const logger = createLogger('synthetic-gateway', env.DEVICELAB_LOG_LEVEL || 'warn');
const [firstPort, lastPort] = (env.BENCH_ACCESS_PORTS || '47400-47999').split('-').map(Number);
let link;
const adbAccess = new AdbAccessEndpoints({
  adb: Adb.createClient({ port: 1 }), ports: { first: firstPort, last: lastPort }, host: '127.0.0.1', logger,
  ownsAndroidDevice: () => true, report: (event) => link?.channels.access.event(event), packagesChanged: () => undefined,
  endpointClosed: (endpoint) => link?.channels.access.endpointClosed(endpoint), sync: () => link?.channels.access.sync() ?? Promise.resolve(),
});
link = new HubLink({
  name: env.DEVICELAB_GATEWAY_NAME, token: env.DEVICELAB_GATEWAY_TOKEN, hubAddress: env.DEVICELAB_HUB,
  publicAddress: '127.0.0.1', publicPort: 0, drivers, appCache: new AppCache(env.DEVICELAB_GATEWAY_CACHE || '/tmp'),
  logger, adbAccess,
});
await drivers.start(link.channels.inventory);
link.on('connected', () => process.stdout.write(`synthetic gateway: connected (${count} devices)\n`));
link.start();
const stop = () => link.stop().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
