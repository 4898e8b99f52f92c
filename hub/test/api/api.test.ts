import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import pino from 'pino';
import { insertDevice } from '../domain/helpers';
import { startTestLab, type TestLab } from '../support/lab';
import { fixture } from '../../../scripts/jest/shared-files';

/**
 * The REST API over HTTP as real clients call it, against a whole running lab: real Basic authentication,
 * real gateway and simulated device behind it. Rows inserted directly stand for devices with no gateway.
 */
let lab: TestLab;
const tokens = new Map<string, string>();
/** Everything logged at error level: malformed input must never reach the catch-all. */
const errors: unknown[] = [];
const logger = pino({ level: 'error', hooks: { logMethod(args, method) { errors.push(args[0]); method.apply(this, args); } } },
  { write: () => undefined });

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1, logger });
  tokens.set('admin', lab.adminToken);
  await lab.hub.db.insertInto('roles').values({ name: 'Lister', entitlements: ['DeviceList', 'DeviceConnect'] }).execute();
  tokens.set('tester@example.com', (await lab.addUser('tester@example.com', ['Lister'])).token);
}, 60_000);
afterAll(() => lab.stop(), 60_000);
afterEach(() => expect(errors).toEqual([]));

const auth = (login = 'admin') => ({ authorization: `Basic ${Buffer.from(`${login}:${tokens.get(login)}`).toString('base64')}` });
async function call(method: string, p: string, init: { body?: string | FormData; headers?: Record<string, string>; login?: string } = {}) {
  const res = await fetch(lab.hub.url + p, { method, body: init.body, headers: { ...auth(init.login), ...init.headers } });
  return { status: res.status, text: await res.text(), headers: res.headers };
}
const form = (body: string, login?: string) => call('POST', '/apiv1/Device',
  { body, login, headers: { 'content-type': 'application/x-www-form-urlencoded' } });

describe('wire rules', () => {
  it('401 with WWW-Authenticate without credentials', async () => {
    const res = await fetch(`${lab.hub.url}/apiv1/Device`);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic/);
  });

  it('unknown paths are 404 failure Results', async () => {
    const res = await call('GET', '/apiv1/Nothing');
    expect(res.status).toBe(404);
    expect(res.text).toMatch(/^\{"isSuccess":false,"errorMessage":/);
    expect((await call('GET', '/elsewhere')).status).toBe(404);
  });

  it('list GETs are bare arrays, get= and empty params ignored, nulls omitted', async () => {
    const d = await insertDevice(lab.hub.db, { name: 'Wire One', slot_number: null });
    const res = await call('GET', `/apiv1/Device?get=&properties=&applications=&allApplications=&Name=Wire+One&slotNumber=`);
    expect(res.status).toBe(200);
    const list = JSON.parse(res.text);
    expect(list).toHaveLength(1);
    expect(list[0].id).toBe(d.id);
    expect(res.text).not.toContain('null');
    expect('slotNumber' in list[0]).toBe(false);
    expect(res.text).not.toContain('\n');
    expect((await call('GET', '/apiv1/Device?name=nothing-like-this')).text).toBe('[]');
  });

  it('case-insensitive names, enums and booleans; pretty output', async () => {
    const d = await insertDevice(lab.hub.db, { name: 'Case One', availability: 'Offline' });
    const res = await call('GET', `/apiv1/device?ID=${d.id}&ENABLED=True&availability=offline&pretty=true`);
    expect(JSON.parse(res.text).map((x: { id: string }) => x.id)).toEqual([d.id]);
    expect(res.text).toContain('\n  {\n    "id": ');
    const monitor = await call('GET', '/apiv1/Device?enabled=True&availability=Offline');
    expect(JSON.parse(monitor.text).map((x: { id: string }) => x.id)).toContain(d.id);
  });

  it('bad Guid, enum and bool give the vendor texts with HTTP 200', async () => {
    expect((await call('GET', '/apiv1/Device?id=abc')).text)
      .toBe('{"isSuccess":false,"errorMessage":"Invalid Guid format: abc","errorCode":"INVALID_PARAMETER","errorParameter":"id"}');
    expect((await call('GET', '/apiv1/Device?availability=invalid')).text)
      .toBe(`{"isSuccess":false,"errorMessage":"The requested value 'invalid' was not found.","errorCode":"INVALID_PARAMETER","errorParameter":"availability"}`);
    const bad = await call('GET', '/apiv1/Device?enabled=maybe');
    expect(bad.status).toBe(200);
    expect(JSON.parse(bad.text)).toEqual({ isSuccess: false, errorMessage: 'Value is not equivalent to either TrueString or FalseString.',
      errorCode: 'INVALID_PARAMETER', errorParameter: 'enabled' });
  });

  it('a bad enum value names its parameter beside the vendor text', async () => {
    expect((await call('GET', '/apiv1/Device?availability=Bogus')).text)
      .toBe(`{"isSuccess":false,"errorMessage":"The requested value 'Bogus' was not found.","errorCode":"INVALID_PARAMETER","errorParameter":"availability"}`);
  });

  it('retain/release from a form body with no query string, as the C# client sends them', async () => {
    const d = await insertDevice(lab.hub.db, { name: 'Form One' });
    const retained = await form(`action=Retain&id=${d.id}`);
    expect(retained.text).toMatch(/^\{"isSuccess":true,"data":\{"authenticator":"/);
    const other = await form(`action=retain&id=${d.serial_number}`, 'tester@example.com');
    expect(JSON.parse(other.text)).toEqual({ isSuccess: false, errorMessage: "Device 'Form One' is in use by 'admin'.", errorCode: 'DEVICE_IN_USE' });
    expect((await form(`action=Release&id=${d.id}`)).text).toBe('{"isSuccess":true}');
    expect((await call('POST', `/apiv1/Device?action=frobnicate&id=${d.id}`)).text)
      .toBe(`{"isSuccess":false,"errorMessage":"Unknown action 'frobnicate'."}`);
    expect(JSON.parse((await form('action=reboot&id=nope', 'tester@example.com')).text).errorMessage)
      .toBe('User does not have required entitlement: DeviceReboot');
  });

  it('Device/Log answers a Result with string data; a lister without DeviceList sees []', async () => {
    const log = await call('GET', `/apiv1/Device/Log?id=${lab.devices[0].serial}`);
    expect(log.text).toMatch(/^\{"isSuccess":true,"data":"/);
    // logcat -v threadtime lines: date, time, pid, tid, priority, tag
    expect(JSON.parse(log.text).data).toMatch(/^\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\s+\d+\s+\d+ [VDIWEF] /m);
    expect(JSON.parse((await call('GET', `/apiv1/Device/Log?id=${lab.devices[0].serial}&lines=0`)).text))
      .toEqual({ isSuccess: false, errorMessage: "Parameter 'lines' must be at least 1." });
    // logcat -t 2: the two most recent lines, after logcat's own `--------- beginning of …` buffer markers.
    const tail = JSON.parse((await call('GET', `/apiv1/Device/Log?id=${lab.devices[0].serial}&lines=2`)).text).data as string;
    expect(tail.trim().split('\n').filter((line) => !line.startsWith('--------- '))).toHaveLength(2);
    expect(JSON.parse((await call('GET', '/apiv1/Device/Log?id=nothing-here')).text))
      .toEqual({ isSuccess: false, errorMessage: "Device 'nothing-here' not found.", errorCode: 'DEVICE_NOT_FOUND' });
    const away = await insertDevice(lab.hub.db, { name: 'Log Away' });
    expect(JSON.parse((await call('GET', `/apiv1/Device/Log?id=${away.serial_number}`)).text).errorMessage)
      .toBe(`Device 'Log Away' is not reachable: No connected gateway holds device ${away.vendor_unique_identifier}.`);
    tokens.set('nobody@example.com', (await lab.addUser('nobody@example.com', [])).token);
    expect((await call('GET', '/apiv1/Device?id=bad', { login: 'nobody@example.com' })).text).toBe('[]');
    expect((await call('GET', '/apiv1/Device/Available', { login: 'nobody@example.com' })).text).toBe('[]');
  });

  it('pretty=true indents every kind of answer: list, Result, failure, 404 and 401', async () => {
    const indented = /^[[{]\n {2}/;
    expect((await call('GET', '/apiv1/Device?pretty=true')).text).toMatch(indented);
    expect((await call('GET', '/apiv1/Service?pretty=True')).text).toMatch(/^\{\n {2}"/);
    expect((await call('GET', '/apiv1/Device?id=bad&pretty=true')).text)
      .toBe('{\n  "isSuccess": false,\n  "errorMessage": "Invalid Guid format: bad",\n  "errorCode": "INVALID_PARAMETER",\n'
        + '  "errorParameter": "id"\n}');
    const missing = await call('GET', '/apiv1/Nothing?pretty=true');
    expect(missing.status).toBe(404);
    expect(missing.text).toMatch(/^\{\n {2}"isSuccess": false,\n {2}"errorMessage": "No resource at /);
    const anonymous = await fetch(`${lab.hub.url}/apiv1/Device?pretty=true`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.text()).toBe('{\n  "isSuccess": false,\n  "errorMessage": "Authentication required."\n}');
    // Without pretty the 401 body is the exact compact text clients compare.
    expect(await (await fetch(`${lab.hub.url}/apiv1/Device`)).text())
      .toBe('{"isSuccess":false,"errorMessage":"Authentication required."}');
  });

  it('credentials with a NUL character are simply wrong credentials (401), not a server error', async () => {
    for (const pair of ['admin\u0000:x', `admin:${lab.adminToken}\u0000`]) {
      const res = await fetch(`${lab.hub.url}/apiv1/Device`, { headers: { authorization: `Basic ${Buffer.from(pair).toString('base64')}` } });
      expect(res.status).toBe(401);
    }
  });

  it('malformed bodies never become 500s', async () => {
    const res1 = await call('POST', '/apiv1/Device', { body: '%%%&&&==', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res1.status).toBe(200);
    const res2 = await call('POST', '/apiv1/Application?add', { body: '--x\r\nbroken', headers: { 'content-type': 'multipart/form-data; boundary=x' } });
    expect(res2.status).toBeLessThan(500);
    expect(JSON.parse(res2.text).isSuccess).toBe(false);
    const res3 = await call('POST', '/apiv1/Device', { body: 'x=1', headers: { 'content-type': 'application/x-www-form-urlencoded; charset=klingon' } });
    expect(res3.status).toBeLessThan(500);
  });
});

describe('applications over HTTP', () => {
  const multipart = async (file: string, fieldName: string, name = path.basename(file)) => {
    const fd = new FormData();
    fd.append(fieldName, new Blob([await readFile(file)]), name);
    return fd;
  };

  it('upload with a GUID field name, wait=true returns the Application; async id polls once', async () => {
    const apk = fixture('ContactManager.apk');
    const waited = await call('POST', '/apiv1/Application?add&wait=true',
      { body: await multipart(apk, '7c9e6679-7425-40de-944b-e07fc1f90ae7') });
    const result = JSON.parse(waited.text);
    expect(waited.text).toMatch(/^\{"isSuccess":true,"data":\{/);
    expect(result.data).toMatchObject({ applicationIdentifier: 'com.example.android.contactmanager', versionCounter: 1 });

    const started = JSON.parse((await call('POST', '/apiv1/Application?add', { body: await multipart(apk, 'upload') })).text);
    expect(started).toEqual({ isSuccess: true, data: { asyncResponseId: expect.stringMatching(/^[0-9a-f-]{36}$/) } });
    const id = started.data.asyncResponseId;
    let polled;
    for (let i = 0; i < 100; i++) {
      polled = JSON.parse((await call('GET', `/apiv1/Async?get=&id=${id}`)).text);
      if (polled.isComplete) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(polled).toMatchObject({ isComplete: true, data: { versionCounter: 2 } });
    expect(JSON.parse((await call('GET', `/apiv1/Async?id=${id}`)).text).isSuccess).toBe(false);

    const listed = JSON.parse((await call('GET', '/apiv1/Application?get=&ApplicationIdentifier=com.example.android.contactmanager')).text);
    expect(listed).toHaveLength(2);
    expect((await call('GET', '/apiv1/Application', { login: 'tester@example.com' })).text).toBe('[]');
  });

  it('non-app uploads fail with Unknown file type.; missing entitlement is reported', async () => {
    const txt = await call('POST', '/apiv1/Application?add&wait=true', { body: await multipart(fixture('README.md'), 'upload', 'ipa.txt') });
    expect(txt.text).toBe('{"isSuccess":false,"errorMessage":"Unknown file type.\\nParameter name: filename\\n.txt"}');
    const denied = await call('POST', '/apiv1/Application?add&wait=true',
      { login: 'tester@example.com', body: await multipart(fixture('ContactManager.apk'), 'upload') });
    expect(JSON.parse(denied.text).errorMessage).toBe('User does not have required entitlement: ApplicationUpload');
    expect(readdirSync(path.join(lab.dataDir, 'uploads'))).toEqual([]);
  });

  it('install is async (wrapped id), uninstall synchronous; tester lacking the entitlement sees it in the poll', async () => {
    const up = JSON.parse((await call('POST', '/apiv1/Application?add&wait=true',
      { body: await multipart(fixture('ContactManager.apk'), 'upload') })).text);
    const serial = lab.devices[0].serial;
    const body = `action=Install&id=${up.data.id}&deviceId=${serial}&force=&nativeAutomation=`;
    const waited = await call('POST', '/apiv1/Application?wait=True', { body: body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(waited.text).toBe('{"isSuccess":true}');
    const started = JSON.parse((await call('POST', '/apiv1/Application', { login: 'tester@example.com', body: body + '&wait=5000',
      headers: { 'content-type': 'application/x-www-form-urlencoded' } })).text);
    expect(started.isSuccess).toBe(true);
    let polled;
    for (let i = 0; i < 100; i++) {
      polled = JSON.parse((await call('GET', `/apiv1/Async?id=${started.data.asyncResponseId}`, { login: 'tester@example.com' })).text);
      if (polled.isComplete) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(polled).toEqual({ isComplete: true, data: { isSuccess: false,
      errorMessage: 'User does not have required entitlement: DeviceApplicationManagement', errorCode: 'ENTITLEMENT_REQUIRED' } });
    expect((await call('POST', `/apiv1/Application?action=uninstall&id=${up.data.id}&deviceId=${serial}`)).text).toBe('{"isSuccess":true}');
  });
});

describe('launch over HTTP', () => {
  it('fails through its result: unknown application, device in use by another, wrong OS, offline, not installed', async () => {
    const up = JSON.parse((await call('POST', '/apiv1/Application?add&wait=true',
      { body: await (async () => { const fd = new FormData(); fd.append('upload', new Blob([await readFile(fixture('ContactManager.apk'))]), 'ContactManager.apk'); return fd; })() })).text);
    const launch = async (appId: string, device: string, login = 'admin') => JSON.parse((await call('POST', '/apiv1/Application',
      { login, body: `action=Launch&id=${appId}&deviceId=${device}&startOnly=&arguments=&wait=true`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' } })).text);
    const missing = '477f5020-fe89-4675-8e6d-92ed4302105a';
    expect(await launch(missing, lab.devices[0].serial)).toEqual({ isSuccess: false, errorMessage: `Application '${missing}' not found.` });
    const taken = await insertDevice(lab.hub.db, { name: 'Launch Taken' });
    expect(JSON.parse((await form(`action=Retain&id=${taken.id}`, 'tester@example.com')).text).isSuccess).toBe(true);
    expect(await launch(up.data.id, taken.id)).toEqual({ isSuccess: false,
      errorMessage: "Device 'Launch Taken' is in use by 'tester@example.com'.", errorCode: 'DEVICE_IN_USE' });
    const ios = await insertDevice(lab.hub.db, { name: 'Launch iOS', operating_system: 'iOS' });
    expect(await launch(up.data.id, ios.serial_number!)).toEqual({ isSuccess: false,
      errorMessage: 'Application operating system does not match the device.' });
    const off = await insertDevice(lab.hub.db, { name: 'Launch Off', availability: 'Offline' });
    expect(await launch(up.data.id, off.id)).toEqual({ isSuccess: false, errorMessage: 'Device is offline.', errorCode: 'DEVICE_UNAVAILABLE' });
    // Not installed on the (real, simulated) device: the device's answer comes back as the failure, with its code; the
    // text is what it was before failures had codes.
    expect(await launch(up.data.id, lab.devices[0].serial)).toEqual({ isSuccess: false,
      errorMessage: expect.stringMatching(/^Launching the application on device '.+' failed: No launchable activity found for com\.example\.android\.contactmanager$/),
      errorCode: 'APP_NOT_LAUNCHABLE' });
  });
});

describe('service', () => {
  it('GET /Service answers HubInformation', async () => {
    const info = JSON.parse((await call('GET', '/apiv1/Service')).text);
    expect(info).toMatchObject({ ServiceVersion: '0.1.0',
      deviceGatewayInformation: [{ deviceVendorUniqueIdentifiers: [expect.stringMatching(/^127\.0\.0\.1:\d+$/)] }] });
    expect(info.ServiceNodeId).toMatch(/^[0-9a-f-]{36}$/);
    expect(info.systemDateTimeUtc).toMatch(/Z$/);
  });
});
