/**
 * What `devicelab` says, against a real lab: files that are no app are refused before they are sent, an app for
 * the other platform is refused without a useless --force hint, several library entries of one app say which
 * one is used, `port ... sync`, a hub whose certificate is not trusted, sizes in
 * binary units, and the install percent in a log.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startTestLab, type TestLab } from '../../hub/test/support/lab';
import { fixture } from '../../scripts/jest/shared-files';
import { formatBytes } from '../src/output';
import { cliEnvironment, runCli, type CliUser } from './support/cli-process';

jest.setTimeout(180_000);

let lab: TestLab;
let tester: CliUser;
let scratch: string;

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1, iosCount: 1, usbHub: {} });
  tester = await lab.addUser('messages@example.com', ['Tester']);
  scratch = mkdtempSync(path.join(os.tmpdir(), 'devicelab-cli-messages-'));
}, 120_000);

afterAll(() => lab?.stop(), 60_000);

const env = () => cliEnvironment(lab, tester);
const android = () => lab.devices[0].serial;
const iPhone = () => lab.iosDevices[0].udid;

interface WireApp { id: string; displayName: string; versionCounter: number }
async function library(): Promise<WireApp[]> {
  return await (await lab.api(lab.admin, '/Application')).json() as WireApp[];
}

async function upload(file: string): Promise<WireApp> {
  const form = new FormData();
  form.append('upload', new Blob([readFileSync(file)]), path.basename(file));
  const reply = await (await lab.api(lab.admin, '/Application?add&wait=true', { method: 'POST', body: form })).json() as { data: WireApp };
  return reply.data;
}

test('sizes in KiB/MiB (powers of 1024), whole bytes below 1 KiB (a rate of 57.14 B/s prints 57 B)', () => {
  expect(formatBytes(400 / 7)).toBe('57 B');
  expect(formatBytes(1536)).toBe('1.5 KiB');
  expect(formatBytes(3 * 1024 * 1024)).toBe('3.0 MiB');
});

test('apps upload of a file that is no .apk/.ipa, or not a zip archive, is refused before it is sent (exit 2)', async () => {
  const before = (await library()).length;
  const readme = await runCli(['apps', 'upload', fixture('README.md')], env());
  expect(readme.code).toBe(2);
  expect(readme.stderr).toMatch(/Cannot upload '.*README\.md': not an \.apk or \.ipa file/);
  expect(readme.stderr).not.toMatch(/uploading/);
  const fake = path.join(scratch, 'fake.apk');
  writeFileSync(fake, 'not a package');
  const notZip = await runCli(['apps', 'upload', fake], env());
  expect(notZip.code).toBe(2);
  expect(notZip.stderr).toMatch(/fake\.apk': it is not a zip archive/);
  expect((await library()).length).toBe(before);
});

test('install of an APK on an iPhone: refused as the wrong platform, before the upload, without suggesting --force', async () => {
  const before = (await library()).length;
  const file = await runCli(['install', fixture('ContactManager.apk'), iPhone()], env());
  expect(file.code).toBe(1);
  expect(file.stderr).toMatch(/is an Android app and .* runs iOS: it cannot be installed there/);
  expect(file.stderr).not.toMatch(/--force/);
  expect((await library()).length).toBe(before);

  const app = await upload(fixture('ContactManager.apk'));
  const byId = await runCli(['install', app.id, iPhone()], env());
  expect(byId.code).toBe(1);
  expect(byId.stderr).toMatch(/is an Android app and .* runs iOS/);
  expect(byId.stderr).not.toMatch(/--force/);
});

test('install by name with several library entries of the app: says it uses the newest, and which', async () => {
  await upload(fixture('ApiDemos-debug.apk'));
  const newest = await upload(fixture('ApiDemos-debug.apk'));
  const entries = (await library()).filter((app) => app.displayName === newest.displayName);
  expect(entries.length).toBeGreaterThan(1);
  expect(Math.max(...entries.map((app) => app.versionCounter))).toBe(newest.versionCounter);
  expect((await runCli(['retain', android()], env())).code).toBe(0);
  try {
    const result = await runCli(['install', newest.displayName, android()], env());
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`${entries.length} library entries match '${newest.displayName}'; using the newest, ${newest.id}`);
  } finally {
    await runCli(['release', android()], env());
  }
});

test('install in a log prints the percent the hub reports', async () => {
  // The device's package manager takes its time once every byte is in: the install is seen running at its percent.
  await lab.world.setInstallDelay(android(), 12_000);
  expect((await runCli(['retain', android()], env())).code).toBe(0);
  try {
    const result = await runCli(['install', fixture('ContactManager.apk'), android()], env());
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/installing .* on .*: \d{1,2}% \(\d+ s\)/);
  } finally {
    await lab.world.setInstallDelay(android(), 0);
    await runCli(['release', android()], env());
  }
});

test('port <device> sync: accepted as data, as the API accepts it', async () => {
  const result = await runCli(['port', android(), 'sync', '--json'], cliEnvironment(lab, lab.admin));
  expect(result.code).toBe(0);
  expect(JSON.parse(result.stdout)).toEqual({ device: android(), state: 'Data' });
});

test('a hub whose TLS certificate is not trusted: the error names NODE_EXTRA_CA_CERTS, which then makes it work', async () => {
  const key = path.join(scratch, 'hub.key');
  const cert = path.join(scratch, 'hub.crt');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  // The CLI's first call is a device list; this server answers every request with an empty one.
  const server = https.createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end('[]');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const base = cliEnvironment(lab, undefined, { DEVICELAB_URL: url, DEVICELAB_USER: 'qa@example.com', DEVICELAB_TOKEN: 'token' });
    delete base.NODE_EXTRA_CA_CERTS;
    const untrusted = await runCli(['devices'], base);
    expect(untrusted.code).toBe(5);
    expect(untrusted.stderr).toMatch(/does not trust \(DEPTH_ZERO_SELF_SIGNED_CERT\).*NODE_EXTRA_CA_CERTS/);
    const trusted = await runCli(['devices'], { ...base, NODE_EXTRA_CA_CERTS: cert });
    expect(trusted).toMatchObject({ code: 0, stdout: 'No device matches.\n' });
  } finally {
    server.close();
  }
});
