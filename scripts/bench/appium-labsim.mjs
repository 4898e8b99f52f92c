#!/usr/bin/env node
// Benchmark: the real Appium server (gateway's appium 3 with the UiAutomator2 and XCUITest drivers) against a
// simulated Android device and a simulated iPhone, spoken to directly over HTTP as a WebDriver client does:
//   session start:  POST /session and DELETE, BENCH_SESSIONS each (default 3). Android: the driver installs the
//                   server APKs on the first one, starts the instrumentation, waits for the simulated server. iOS:
//                   WebDriverAgent at webDriverAgentUrl, a port forwarded through labsim's usbmuxd to 8100.
//   per command:    GET /session/:id/source and POST /session/:id/element (xpath), BENCH_COMMANDS each (default 100)
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ms, printTable, summarize } from './statistics.mjs';

const require = createRequire(import.meta.url);
const { LabWorld, specFromPreset, iosSpecFromPreset, forwardUsbmuxPort } = require('../../labsim/dist');
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const sessions = Number(process.env.BENCH_SESSIONS || 3);
const commands = Number(process.env.BENCH_COMMANDS || 100);
const progress = (text) => process.stderr.write(`[bench] ${text}\n`);

const freePort = () => new Promise((resolve) => {
  const s = net.createServer();
  s.listen(0, '127.0.0.1', () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
});
const which = (name) => (process.env.PATH ?? '').split(path.delimiter).map((d) => path.join(d, name)).find((f) => fs.existsSync(f));

const world = new LabWorld();
await world.start();
const spec = specFromPreset('pixel-7', 0);
await world.addAndroidDevice(spec);
const device = world.device(spec.serial);
const iosSpec = iosSpecFromPreset('iphone-13', 0);
await world.addIosDevice(iosSpec);
await world.iosFleet.pairWithIdevicepair(iosSpec.udid);
const wdaForward = await forwardUsbmuxPort(world.iosFleet.usbmuxd.socketPath, iosSpec.udid, 8100);
const sdk = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-sdk-'));
fs.mkdirSync(path.join(sdk, 'platform-tools'));
fs.symlinkSync(fs.realpathSync(which('adb')), path.join(sdk, 'platform-tools', 'adb'));
const port = await freePort();
const appium = spawn(process.execPath, [path.join(ROOT, 'gateway/node_modules/appium/index.js'), '--port', String(port), '--address', '127.0.0.1', '--log-format', 'json', '--log-level', 'info'], {
  env: { ...process.env, APPIUM_HOME: path.join(ROOT, 'gateway'), ANDROID_HOME: sdk, ANDROID_SDK_ROOT: sdk, ...world.iosFleet.env() }, stdio: 'ignore',
});
const base = `http://127.0.0.1:${port}`;

async function call(method, url, body) {
  const r = await fetch(base + url, { method, headers: { 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
  const json = await r.json();
  if (!r.ok) throw new Error(`${method} ${url}: ${r.status} ${JSON.stringify(json.value).slice(0, 300)}`);
  return json.value;
}

try {
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/status`)).ok) break;
    } catch { /* starting */ }
    if (i > 400) throw new Error('appium did not start');
    await new Promise((r) => setTimeout(r, 250));
  }
  const platforms = {
    android: {
      title: 'Android, UiAutomator2 driver',
      caps: async () => ({
        platformName: 'Android', 'appium:automationName': 'UiAutomator2', 'appium:udid': device.adbSerial,
        'appium:systemPort': await freePort(), 'appium:adbPort': world.adbCli.serverPort,
      }),
      find: { using: 'xpath', value: '//*[@text="Chrome"]' },
    },
    ios: {
      title: 'iOS, XCUITest driver',
      caps: async () => ({
        platformName: 'iOS', 'appium:automationName': 'XCUITest', 'appium:udid': iosSpec.udid, 'appium:platformVersion': iosSpec.productVersion,
        'appium:webDriverAgentUrl': `http://127.0.0.1:${wdaForward.port}`, 'appium:mjpegServerPort': await freePort(),
      }),
      find: { using: 'xpath', value: '//XCUIElementTypeIcon[@name="Chrome"]' },
    },
  };
  const timed = async (fn) => {
    const samples = [];
    for (let i = 0; i < commands; i++) {
      const t0 = performance.now();
      await fn();
      samples.push(performance.now() - t0);
    }
    return samples;
  };
  const rows = [];
  for (const platform of Object.values(platforms)) {
    const starts = [];
    let sessionId;
    for (let i = 0; i < sessions; i++) {
      const t0 = performance.now();
      ({ sessionId } = await call('POST', '/session', { capabilities: { alwaysMatch: await platform.caps(), firstMatch: [{}] } }));
      starts.push(performance.now() - t0);
      progress(`${platform.title}: session ${i + 1}/${sessions}: ${ms(starts[i])}`);
      if (i < sessions - 1) await call('DELETE', `/session/${sessionId}`);
    }
    const source = await timed(() => call('GET', `/session/${sessionId}/source`));
    const find = await timed(() => call('POST', `/session/${sessionId}/element`, platform.find));
    await call('DELETE', `/session/${sessionId}`);
    rows.push(
      [`${platform.title}: session start`, summarize(starts)],
      [`${platform.title}: first session start`, summarize(starts.slice(0, 1))],
      [`${platform.title}: GET /source`, summarize(source)],
      [`${platform.title}: find element (xpath)`, summarize(find)],
    );
  }
  process.stdout.write('\nAppium against simulated devices\n');
  printTable(['what', 'n', 'min', 'p50', 'p95', 'max'], rows.map(([what, s]) => [what, s.count, ms(s.min), ms(s.median), ms(s.p95), ms(s.max)]));
} finally {
  appium.kill('SIGTERM');
  await new Promise((r) => appium.once('exit', r));
  await wdaForward.close();
  await world.stop();
  fs.rmSync(sdk, { recursive: true, force: true });
}
