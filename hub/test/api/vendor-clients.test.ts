/**
 * What the vendor's own clients need (wire rules 24, 25, 27, 28 of docs/wire-rules.md), over real HTTP on a whole
 * lab, with the request shapes the published C# client sends (`get=` first, PascalCase keys, form-body POSTs): its
 * /Service names, its device and application filter keys, unknown keys refused on every route, its `yyyy/MM/dd`
 * dates, and a deleted device that is plugged in again.
 */
import { insertDevice } from '../domain/helpers';
import { knownParameters } from '../../src/api/openapi/endpoints';
import { startTestLab, waitFor, type TestLab } from '../support/lab';
import { snapshotTables } from '../support/table-snapshot';

let lab: TestLab;
type Who = { login: string; token: string };
let jane: Who;

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 2 });
  jane = await lab.addUser('jane@example.com', ['Administrator']);
  await lab.hub.db.updateTable('users').set({ first_name: 'Jane', last_name: 'Doe' }).where('login', '=', jane.login).execute();
}, 90_000);

afterAll(() => lab?.stop(), 60_000);

interface DeviceJson {
  id: string; name: string; serialNumber: string; vendorUniqueIdentifier: string; deleted: boolean; availability: string;
  retainedById?: string;
}

async function getJson(pathAndQuery: string, who: Who = lab.admin): Promise<any> {
  const res = await lab.api(who, pathAndQuery);
  expect(res.status).toBe(200);
  return res.json();
}

/** The C# client's POST: urlencoded body, no query string. */
async function csForm(path: string, body: string, who: Who = lab.admin): Promise<unknown> {
  const res = await lab.api(who, path, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  expect(res.status).toBe(200);
  return res.json();
}

const ids = (list: { id: string }[]) => list.map((d) => d.id).sort();
const deviceBySerial = async (serial: string): Promise<DeviceJson> =>
  ((await getJson('/Device')) as DeviceJson[]).find((d) => d.serialNumber === serial)!;

describe('GET /Service', () => {
  test("carries the C# client's names beside the spec's, for the hub and each gateway", async () => {
    const info = await getJson('/Service?get=');
    expect(info.deviceConnectNodeId).toBe(info.ServiceNodeId);
    expect(info.deviceConnectVersion).toBe(info.ServiceVersion);
    expect(info.gatewayInformation).toEqual(info.deviceGatewayInformation);
    expect(info.gatewayInformation).toHaveLength(1);
    const [gateway] = info.gatewayInformation;
    expect(gateway).toMatchObject({ xcode: [], buildTool: [] });
    expect(gateway.appium).toEqual(gateway.automation.map(({ path, version, pathHash }: { path: string; version: string; pathHash: string }) =>
      ({ path, version, patchHash: pathHash })));
    expect(gateway.appiumConfigurationError).toEqual(gateway.automationConfigurationError);
    expect(gateway.deviceConnectNodeId).toBe(gateway.ServiceNodeId);
    expect(gateway.deviceConnectVersion).toBe(gateway.ServiceVersion);
    expect(gateway.deviceVendorUniqueIdentifiers).toHaveLength(lab.devices.length);
  });
});

describe("the C# client's device filters", () => {
  test('AnyId finds one device by Guid, serial number or vendor id, on /Device and /Device/Available', async () => {
    const device = await deviceBySerial(lab.devices[0].serial);
    for (const anyId of [device.id, device.serialNumber, device.vendorUniqueIdentifier, device.id.toUpperCase()]) {
      expect(ids(await getJson(`/Device?get=&properties=&applications=&AnyId=${encodeURIComponent(anyId)}`))).toEqual([device.id]);
      expect(ids(await getJson(`/Device/Available?get=&AnyId=${encodeURIComponent(anyId)}`))).toEqual([device.id]);
    }
    expect(await getJson('/Device?get=&AnyId=no-such-device')).toEqual([]);
    expect(ids(await getJson(`/Device?get=&VendorUniqueIdentifier=${encodeURIComponent(device.vendorUniqueIdentifier)}`)))
      .toEqual([device.id]);
  });

  test('OperatingSystemVersion and BundleInstalled', async () => {
    const row = await insertDevice(lab.hub.db, { operating_system_version: '99.1', availability: 'Offline',
      installed_packages: JSON.stringify([{ identifier: 'com.vendor.only', version: '1', buildVersion: '1', system: false }]) as never });
    try {
      expect(ids(await getJson('/Device?get=&OperatingSystemVersion=99.1'))).toEqual([row.id]);
      expect(ids(await getJson('/Device?get=&BundleInstalled=com.vendor.only'))).toEqual([row.id]);
      expect(await getJson('/Device?get=&BundleInstalled=com.vendor')).toEqual([]);
      // Offline: not available, whatever the filter.
      expect(await getJson('/Device/Available?get=&BundleInstalled=com.vendor.only')).toEqual([]);
    } finally {
      await lab.hub.db.deleteFrom('devices').where('id', '=', row.id).execute();
    }
  });

  test('Retained, RetainedBy (Guid or login) and RetainedByDisplayName', async () => {
    const device = await deviceBySerial(lab.devices[0].serial);
    const other = await deviceBySerial(lab.devices[1].serial);
    const [janeRow] = await getJson(`/User?UserName=${encodeURIComponent(jane.login)}`) as { id: string }[];
    expect(await csForm('/Device', `action=Retain&id=${device.id}`, jane)).toMatchObject({ isSuccess: true });
    try {
      expect(ids(await getJson('/Device?get=&Retained=True'))).toEqual([device.id]);
      expect(ids(await getJson('/Device?get=&Retained=False'))).toEqual([other.id]);
      for (const by of [janeRow.id, 'JANE@example.com']) {
        expect(ids(await getJson(`/Device?get=&RetainedBy=${encodeURIComponent(by)}`))).toEqual([device.id]);
      }
      expect(await getJson('/Device?get=&RetainedBy=admin')).toEqual([]);
      expect(ids(await getJson('/Device?get=&RetainedByDisplayName=jane+DOE'))).toEqual([device.id]);
      expect(await getJson('/Device?get=&RetainedByDisplayName=Jane')).toEqual([]);
      expect(await getJson('/Device?get=&Retained=perhaps'))
        .toEqual({ isSuccess: false, errorMessage: 'Value is not equivalent to either TrueString or FalseString.', errorCode: 'INVALID_PARAMETER', errorParameter: 'Retained' });
    } finally {
      expect(await csForm('/Device', `action=Release&id=${device.id}`, jane)).toEqual({ isSuccess: true });
    }
  });
});

describe("the C# client's application filters (ApplicationProperties)", () => {
  const app = (over: Record<string, unknown>) => ({
    application_identifier: 'com.vendor.filters', operating_system: 'Android', blob_sha256: 'a'.repeat(64),
    file_name: 'f.apk', file_byte_count: '1', ...over,
  });
  let first: string;
  let second: string;
  let iosApp: string;

  beforeAll(async () => {
    const insert = async (over: Record<string, unknown>) => (await lab.hub.db.insertInto('applications')
      .values(app(over) as never).returning('id').executeTakeFirstOrThrow()).id;
    first = await insert({ display_name: 'Filter Probe', version: '2.0', build_version: '7', version_counter: 1 });
    second = await insert({ display_name: 'Filter Probe', version: '7', build_version: '8', version_counter: 2 });
    iosApp = await insert({ display_name: 'Other Probe', version: '1.0', build_version: '1', version_counter: 1,
      application_identifier: 'com.vendor.ios', operating_system: 'iOS', provisions_all_devices: true });
  });

  afterAll(() => lab.hub.db.deleteFrom('applications').where('id', 'in', [first, second, iosApp]).execute());

  test('IdOrName matches the Guid or the display name (any letter case)', async () => {
    expect(ids(await getJson(`/Application?get=&IdOrName=${first}`))).toEqual([first]);
    expect(ids(await getJson(`/Application?get=&IdOrName=${first.toUpperCase()}`))).toEqual([first]);
    expect(ids(await getJson('/Application?get=&IdOrName=filter+PROBE'))).toEqual([first, second].sort());
    expect(await getJson('/Application?get=&IdOrName=Filter')).toEqual([]);
  });

  test('BuildVersionOrVersion matches buildVersion or version', async () => {
    expect(ids(await getJson('/Application?get=&BuildVersionOrVersion=7'))).toEqual([first, second].sort());
    expect(ids(await getJson('/Application?get=&BuildVersionOrVersion=2.0'))).toEqual([first]);
    expect(await getJson('/Application?get=&BuildVersionOrVersion=9')).toEqual([]);
  });

  test('UploadedVersionCounter matches versionCounter; ProvisionsAllDevices is a boolean', async () => {
    const probes = (list: { id: string }[]) => ids(list).filter((id) => [first, second, iosApp].includes(id));
    expect(probes(await getJson('/Application?get=&UploadedVersionCounter=2'))).toEqual([second]);
    expect(probes(await getJson('/Application?get=&ProvisionsAllDevices=True'))).toEqual([iosApp]);
    expect(probes(await getJson('/Application?get=&ProvisionsAllDevices=False&DisplayName=Filter+Probe')))
      .toEqual([first, second].sort());
    expect(await getJson('/Application?get=&UploadedVersionCounter=two'))
      .toEqual({ isSuccess: false, errorMessage: 'Input string was not in a correct format.', errorCode: 'INVALID_PARAMETER',
        errorParameter: 'UploadedVersionCounter' });
    expect(await getJson('/Application?get=&ProvisionsAllDevices=maybe'))
      .toEqual({ isSuccess: false, errorMessage: 'Value is not equivalent to either TrueString or FalseString.', errorCode: 'INVALID_PARAMETER',
        errorParameter: 'ProvisionsAllDevices' });
  });
});

describe("the C# client's other DeviceProperties keys", () => {
  test('DisableMetrics selects the devices whose passive metrics logging is off', async () => {
    const device = await deviceBySerial(lab.devices[0].serial);
    const other = await deviceBySerial(lab.devices[1].serial);
    expect(await csForm('/Device/Metrics', `action=Enabled&id=${device.id}&enable=False`)).toEqual({ isSuccess: true });
    try {
      expect(ids(await getJson('/Device?get=&properties=&applications=&allApplications=&DisableMetrics=True'))).toEqual([device.id]);
      expect(ids(await getJson('/Device/Available?get=&DisableMetrics=False'))).toEqual([other.id]);
    } finally {
      expect(await csForm('/Device/Metrics', `action=Enabled&id=${device.id}&enable=True`)).toEqual({ isSuccess: true });
    }
  });

  test('the keys without a meaning here are accepted on /Device and /Device/Available and change nothing', async () => {
    const keys = ['ReleaseFlags', 'HardDelete', 'SupportedFormFactors', 'SimulatedBattery', 'ChargeStartDate', 'AgentStatus'];
    const all = ids(await getJson('/Device?get='));
    for (const key of keys) {
      expect(ids(await getJson(`/Device?get=&${key}=True`))).toEqual(all);
      expect(ids(await getJson(`/Device/Available?get=&${key}=1`))).toEqual(ids(await getJson('/Device/Available?get=')));
    }
  });
});

describe('unknown parameter keys', () => {
  const unknown = (parameter: string) => ({ errorCode: 'UNKNOWN_PARAMETER', errorParameter: parameter });
  test('a key that is not a filter is a failure naming it, never the whole list; empty keys are omitted', async () => {
    expect(await getJson('/Device?get=&Colour=red'))
      .toEqual({ isSuccess: false, errorMessage: "Unknown parameter 'Colour' for GET /Device.", ...unknown('Colour') });
    expect(await getJson('/device/available/?get=&AnyIdd=x'))
      .toEqual({ isSuccess: false, errorMessage: "Unknown parameter 'AnyIdd' for GET /Device/Available.", ...unknown('AnyIdd') });
    expect(await getJson('/Application?get=&IdOrNamee=x'))
      .toEqual({ isSuccess: false, errorMessage: "Unknown parameter 'IdOrNamee' for GET /Application.", ...unknown('IdOrNamee') });
    // Empty means omitted (rule 4); the universal keys pass everywhere.
    expect(await getJson('/Device?get=&Colour=&wait=true&pretty=false')).toHaveLength(lab.devices.length);
    // In a form body too, and nothing happens.
    const device = await deviceBySerial(lab.devices[1].serial);
    expect(await csForm('/Device', `action=Retain&id=${device.id}&Colour=red`))
      .toEqual({ isSuccess: false, errorMessage: "Unknown parameter 'Colour' for POST /Device.", ...unknown('Colour') });
    expect((await deviceBySerial(lab.devices[1].serial)).retainedById).toBeUndefined();
  });

  test('every route refuses a key it does not know, before doing anything', async () => {
    const before = await snapshotTables(lab.hub.db);
    const problems: string[] = [];
    for (const { route } of knownParameters().values()) {
      const [method, path] = route.split(' ');
      const res = await lab.api(lab.admin, `${path}?zzNotAKey=1`, { method, ...(method === 'POST' ? { body: '' } : {}) });
      const text = await res.text();
      const expected = JSON.stringify({ isSuccess: false, errorMessage: `Unknown parameter 'zzNotAKey' for ${route}.`, ...unknown('zzNotAKey') });
      if (res.status !== 200 || text !== expected) problems.push(`${route}: HTTP ${res.status} ${text.slice(0, 200)}`);
    }
    expect(problems).toEqual([]);
    expect(await snapshotTables(lab.hub.db)).toEqual(before);
  });
});

describe('dates', () => {
  test('yyyy/MM/dd and yyyy/MM/dd H:mm:ss are accepted as .NET writes them', async () => {
    const all = (await getJson('/Report/History?get=&take=1')).count;
    expect(all).toBeGreaterThan(0);
    const count = async (query: string) => {
      const body = await getJson(`/Report/History?get=&take=1&${query}`);
      expect(body).not.toHaveProperty('isSuccess');
      return body.count;
    };
    expect(await count('fromDate=2016/03/24&toDate=2016/03/24')).toBe(0);
    expect(await count(`fromDate=${encodeURIComponent('2016/03/24 0:00:00')}`)).toBe(all);
    expect(await count(`toDate=${encodeURIComponent('2016/3/24 17:09:58')}`)).toBe(0);
    expect(await getJson('/Report/History?get=&fromDate=2016/02/30'))
      .toEqual({ isSuccess: false, errorMessage: "String '2016/02/30' was not recognized as a valid DateTime.", errorCode: 'INVALID_PARAMETER',
        errorParameter: 'fromDate' });
  });
});

test('a deleted device that is plugged in again is no longer deleted: Online, listed, available, recorded', async () => {
  const spec = lab.devices[1];
  const device = await deviceBySerial(spec.serial);
  await lab.world.unplug(spec.serial);
  await waitFor(async () => (await deviceBySerial(spec.serial)).availability === 'Offline', 15_000, 'Offline');
  expect(await csForm('/Device', `delete=&id=${device.id}`)).toEqual({ isSuccess: true });
  expect((await deviceBySerial(spec.serial)).deleted).toBe(true);

  await lab.world.plug(spec.serial);
  await waitFor(async () => (await deviceBySerial(spec.serial)).availability === 'Online', 20_000, 'Online');
  expect(await deviceBySerial(spec.serial)).toMatchObject({ id: device.id, deleted: false, availability: 'Online' });
  expect(ids(await getJson(`/Device/Available?get=&AnyId=${device.id}`))).toEqual([device.id]);
  const { events } = await getJson(`/Report/History?get=&deviceId=${device.id}&take=50`) as
    { events: { eventType: string; boolValue: boolean; message: string }[] };
  expect(events.filter((e) => e.eventType === 'DeviceDeletion').map((e) => [e.boolValue, e.message]))
    .toEqual([[false, 'Device Undeleted'], [true, 'Device Deleted']]);
}, 60_000);
