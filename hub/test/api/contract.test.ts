/**
 * Client contract: the request SHAPES of the real clients (the vendor's C# client, its Python monitor, its QA curl
 * suite) replayed against a real lab: the C# client's form-body POSTs and `get=` GETs, its GUID-named multipart part,
 * the Python monitor's query, the curl forms of the spec; plus two users racing to retain one device over HTTP.
 *
 * The metrics and USB hub routes (`/Device/Metrics`, `/Device/UsbPort`, `/Gateway`, `/Gateway/UsbHub`) are tested with
 * those routes (metrics-http.test.ts, gateway-usb-hubs.test.ts).
 */
import { readFileSync } from 'node:fs';
import { fixture } from '../../../scripts/jest/shared-files';
import { startTestLab, waitFor, type TestLab } from '../support/lab';

let lab: TestLab;
let admin: { login: string; token: string };
let rival: { login: string; token: string };

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 2 });
  admin = lab.admin;
  rival = await lab.addUser('rival@example.com', ['Administrator']);
}, 90_000);

afterAll(() => lab?.stop(), 60_000);

type Who = { login: string; token: string };
const APK = () => readFileSync(fixture('ContactManager.apk'));

/** The C# client: urlencoded body, no query string. */
async function csForm(who: Who, path: string, body: string): Promise<{ status: number; json: any }> {
  const res = await lab.api(who, path, {
    method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
  });
  return { status: res.status, json: await res.json() };
}

async function getJson(who: Who, pathAndQuery: string): Promise<any> {
  const res = await lab.api(who, pathAndQuery);
  expect(res.status).toBe(200);
  return res.json();
}

async function deviceOf(serial: string): Promise<{ id: string; name: string; vendorUniqueIdentifier: string }> {
  const list = await getJson(admin, '/Device') as { id: string; name: string; serialNumber: string; vendorUniqueIdentifier: string }[];
  const device = list.find((d) => d.serialNumber === serial);
  if (!device) throw new Error(`no device ${serial}`);
  return device;
}

async function pollAsync(who: Who, id: string): Promise<unknown> {
  const { value } = await waitFor(async () => {
    const body = await getJson(who, `/Async?get=&id=${id}`);
    return body.isComplete ? body : undefined;
  }, 30_000, `async job ${id}`);
  return value.data;
}

describe('C# client shapes', () => {
  test('action=Retain&id=… and action=Release&id=… in a form body with no query string', async () => {
    const device = await deviceOf(lab.devices[0].serial);
    const retained = await csForm(admin, '/Device', `action=Retain&id=${device.id}`);
    expect(retained.status).toBe(200);
    // The port of the device's adb endpoint on its gateway (DEVICELAB_GATEWAY_ADB_PORTS, default 7400-7599).
    expect(retained.json).toMatchObject({ isSuccess: true, data: { gatewayPort: expect.any(Number) } });
    expect(retained.json.data.gatewayPort).toBeGreaterThanOrEqual(7400);
    expect(retained.json.data.gatewayPort).toBeLessThanOrEqual(7599);
    expect(Object.keys(retained.json)[0]).toBe('isSuccess');
    expect(await csForm(admin, '/Device', `action=Release&id=${device.id}`)).toEqual({ status: 200, json: { isSuccess: true } });
  });

  test('delete=&id=… in a form body: an Online device is refused with a clear failure, nothing deleted', async () => {
    const device = await deviceOf(lab.devices[0].serial);
    const deleted = await csForm(admin, '/Device', `delete=&id=${device.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.json.isSuccess).toBe(false);
    expect(deleted.json.errorMessage).toEqual(expect.any(String));
    expect((await getJson(admin, `/Device?id=${device.id}`))[0].deleted).toBe(false);
  });

  test('GET with get= and every optional parameter empty, PascalCase filter names', async () => {
    const device = await deviceOf(lab.devices[1].serial);
    const list = await getJson(admin, `/Device?get=&properties=&applications=&allApplications=&Name=${encodeURIComponent(device.name)}`);
    expect(list.map((d: { id: string }) => d.id)).toEqual([device.id]);
    expect(list[0].properties).toBeUndefined();
    expect(await getJson(admin, `/Application?get=&DisplayName=`)).toEqual(expect.any(Array));
    const history = await getJson(admin, '/Report/History?get=&applicationId=&deviceId=&fromDate=&toDate=&days=&userId=&skip=&take=');
    expect(Object.keys(history).slice(0, 2)).toEqual(['count', 'pageSize']);
  });

  test('True/False booleans and US-culture dates', async () => {
    const device = await deviceOf(lab.devices[1].serial);
    const listed = await getJson(admin, `/Device?get=&Enabled=True&Deleted=False&id=${device.id}`);
    expect(listed).toHaveLength(1);
    expect(await getJson(admin, `/Device?get=&Enabled=False&id=${device.id}`)).toEqual([]);
    const all = await getJson(admin, '/Report/History?get=&take=1');
    expect(all.count).toBeGreaterThan(0);
    const us = (text: string) => encodeURIComponent(text);
    const since2016 = await getJson(admin, `/Report/History?get=&fromDate=${us('3/24/2016 5:09:58 PM')}&toDate=&take=1`);
    expect(since2016.count).toBe(all.count);
    expect((await getJson(admin, `/Report/History?get=&fromDate=&toDate=${us('3/24/2016 5:09:58 PM')}&take=1`)).count).toBe(0);
    expect((await getJson(admin, `/Report/History?get=&fromDate=${us('12/31/2099 11:59:59 PM')}&take=1`)).count).toBe(0);
  });

  test('enable, disable and reset as form bodies; empty reset flags take the system defaults, never false', async () => {
    const device = await deviceOf(lab.devices[1].serial);
    expect(await csForm(admin, '/Device', `action=Disable&id=${device.id}`)).toEqual({ status: 200, json: { isSuccess: true } });
    expect((await getJson(admin, `/Device?id=${device.id}`))[0].enabled).toBe(false);
    expect(await csForm(admin, '/Device', `action=Enable&id=${device.id}`)).toEqual({ status: 200, json: { isSuccess: true } });
    expect((await getJson(admin, `/Device?id=${device.id}`))[0].enabled).toBe(true);
    // Defaults: uninstall nothing, reboot. A caller who may not reboot learns that `reboot=` meant the default (true).
    await lab.hub.db.insertInto('roles').values({ name: 'NoReboot', entitlements: ['DeviceList', 'DeviceApplicationManagement'] }).execute();
    const noReboot = await lab.addUser('noreboot@example.com', ['NoReboot']);
    const settings = await lab.api(admin, '/Settings?update', { method: 'POST', headers: { 'content-type': 'application/json' },
      body: '{"resetUninstallAll":"False","resetReboot":"True"}' });
    expect(await settings.json()).toEqual({ isSuccess: true });
    expect(await csForm(noReboot, '/Device', `action=Reset&id=${device.id}&uninstallAll=&reboot=`)).toEqual({ status: 200,
      json: { isSuccess: false, errorMessage: 'User does not have required entitlement: DeviceReboot', errorCode: 'ENTITLEMENT_REQUIRED' } });
    expect(await csForm(noReboot, '/Device', `action=Reset&id=${device.id}&uninstallAll=&reboot=False`))
      .toEqual({ status: 200, json: { isSuccess: true } });
  });

  test('the C# report calls: History, Usage and Availability with every parameter present, most of them empty', async () => {
    const empty = 'get=&applicationId=&deviceId=&fromDate=&toDate=&days=&userId=&skip=&take=';
    expect(Object.keys(await getJson(admin, `/Report/Usage?${empty}`))).toEqual(['count', 'pageSize', 'deviceUsage']);
    const timeline = await getJson(admin, '/Report/Availability?get=&fromDate=&toDate=&days=1&window=00:00:30');
    expect(timeline).toMatchObject({ isSuccess: true, data: expect.any(Array) });
    expect(timeline.data[0]).toEqual({ date: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      online: expect.any(Number), inUse: expect.any(Number) });
  });

  test('upload: one part named by a random GUID, unquoted name/filename and filename*=utf-8\'\'…', async () => {
    const boundary = 'a1b2c3d4-0000-4000-8000-0123456789ab';
    const partName = 'f81d4fae-7dec-41d0-a765-00a0c91e6bf6';
    const head = Buffer.from(`--${boundary}\r\nContent-Type: application/octet-stream\r\n`
      + `Content-Disposition: form-data; name=${partName}; filename=ContactManager.apk; filename*=utf-8''ContactManager.apk\r\n\r\n`);
    const body = Buffer.concat([head, APK(), Buffer.from(`\r\n--${boundary}--\r\n`)]);
    const res = await lab.api(admin, '/Application?add', {
      method: 'POST', body, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    const reply = await res.json() as { data: { asyncResponseId: string } };
    expect(reply).toMatchObject({ isSuccess: true, data: { asyncResponseId: expect.stringMatching(/^[0-9a-f-]{36}$/) } });
    const app = await pollAsync(admin, reply.data.asyncResponseId);
    expect(app).toMatchObject({ applicationIdentifier: 'com.example.android.contactmanager', fileName: 'ContactManager.apk' });
    // Delivered once; afterwards the id is invalid.
    expect(await getJson(admin, `/Async?get=&id=${reply.data.asyncResponseId}`)).toMatchObject({ isSuccess: false,
      errorMessage: expect.any(String) });
  });

  test('install with force=&nativeAutomation= (empty = omitted), then uninstall with the alternate removedate', async () => {
    const device = await deviceOf(lab.devices[1].serial);
    const [app] = await getJson(admin, '/Application?applicationIdentifier=com.example.android.contactmanager');
    const started = await csForm(admin, '/Application', `action=Install&id=${app.id}&deviceId=${device.id}&force=&nativeAutomation=`);
    expect(started.json).toMatchObject({ isSuccess: true, data: { asyncResponseId: expect.any(String) } });
    expect(await pollAsync(admin, started.json.data.asyncResponseId)).toEqual({ isSuccess: true });
    expect(await csForm(admin, '/Application', `action=Uninstall&id=${app.id}&deviceId=${device.id}&removedate=False`))
      .toEqual({ status: 200, json: { isSuccess: true } });
  });
});

describe('Python monitor and curl shapes', () => {
  test('GET /Device?enabled=True&availability=Offline: a bare array ([] with every device Online)', async () => {
    expect(await getJson(admin, '/Device?enabled=True&availability=Offline')).toEqual([]);
    expect((await getJson(admin, '/Device?enabled=True&availability=Online')).length).toBe(lab.devices.length);
  });

  test('curl: verbs without =, action in the query, a JSON update with unquoted keys', async () => {
    const device = await deviceOf(lab.devices[0].serial);
    const retained = await (await lab.api(admin, `/Device?action=retain&Id=${device.id}`, { method: 'POST' })).json() as { isSuccess: boolean };
    expect(retained.isSuccess).toBe(true);
    expect(await (await lab.api(admin, `/Device?action=release&Id=${device.id}`, { method: 'POST' })).json()).toEqual({ isSuccess: true });
    const updated = await lab.api(admin, `/Device?update&id=${device.id}`, {
      method: 'POST', body: '{notes:"contract notes"}', headers: { 'content-type': 'application/json' },
    });
    expect(await updated.json()).toEqual({ isSuccess: true });
    expect((await getJson(admin, `/Device?id=${device.id}`))[0].notes).toBe('contract notes');
  });

  test('curl -F upload=@file with wait=true returns the Application; wait=5000 is ignored', async () => {
    const form = new FormData();
    form.append('upload', new Blob([APK()]), 'ContactManager.apk');
    const waited = await (await lab.api(admin, '/Application?add&wait=true', { method: 'POST', body: form })).json();
    expect(waited).toMatchObject({ isSuccess: true, data: { id: expect.any(String), fileName: 'ContactManager.apk' } });
    const again = new FormData();
    again.append('upload', new Blob([APK()]), 'ContactManager.apk');
    const notWaited = await (await lab.api(admin, '/Application?add&wait=5000', { method: 'POST', body: again })).json() as { data: { asyncResponseId: string } };
    expect(notWaited).toMatchObject({ isSuccess: true, data: { asyncResponseId: expect.any(String) } });
    await pollAsync(admin, notWaited.data.asyncResponseId);
  });

  test('an unknown async id is a failure Result, HTTP 200', async () => {
    const res = await lab.api(admin, '/Async?id=7c9e6679-7425-40de-944b-e07fc1f90ae7');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ isSuccess: false, errorMessage: expect.any(String) });
  });
});

test('two users retain one device at once over HTTP: exactly one wins, 100 times over', async () => {
  const device = await deviceOf(lab.devices[0].serial);
  const ids = new Map<Who, string>();
  for (const who of [admin, rival]) {
    const [row] = (await getJson(admin, `/User?UserName=${encodeURIComponent(who.login)}`)) as { id: string }[];
    ids.set(who, row.id);
  }
  for (let i = 0; i < 100; i++) {
    const [a, b] = await Promise.all([
      csForm(admin, '/Device', `action=Retain&id=${device.id}`),
      csForm(rival, '/Device', `action=Retain&id=${device.id}`),
    ]);
    const winners = [a, b].filter((r) => r.json.isSuccess);
    expect(winners).toHaveLength(1);
    const loser = [a, b].find((r) => !r.json.isSuccess)!;
    expect(loser.status).toBe(200);
    expect(loser.json.errorMessage).toMatch(new RegExp(`^Device '.*' is in use by '(admin|rival@example\\.com)'\\.$`));
    const winner = a.json.isSuccess ? admin : rival;
    expect((await getJson(admin, `/Device?id=${device.id}`))[0].retainedById).toBe(ids.get(winner));
    expect(await csForm(winner, '/Device', `action=Release&id=${device.id}`)).toEqual({ status: 200, json: { isSuccess: true } });
  }
});
