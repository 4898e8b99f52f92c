/**
 * The entitlement denial of every entitlement on every endpoint that needs it (issue "Done when": endpoint x case
 * x test), over HTTP on a running lab. Each caller holds every entitlement but the one under test, so the answer
 * can only come from that one missing entitlement. Every request runs twice: against the real device and
 * application, and against identifiers nobody has, because the entitlement is checked before existence
 * (wire rule 19, docs/wire-rules.md). Nothing may change either way.
 */
import { readFileSync } from 'node:fs';
import { Entitlement, type Entitlement as EntitlementName } from '@devicelab/shared';
import { fixture } from '../../../scripts/jest/shared-files';
import { startTestLab, waitFor, type TestLab } from '../support/lab';
import { snapshotTables } from '../support/table-snapshot';

type Who = { login: string; token: string; id: string };
let lab: TestLab;
let admin: Who;
/** Missing entitlement -> a user holding all the others. */
const without = new Map<string, Who>();
const real = { dev: '', app: '' };
const unknown = { dev: 'no-such-device', app: '7c9e6679-7425-40de-944b-e07fc1f90ae7' };

async function userWithout(missing: EntitlementName[]): Promise<Who> {
  const name = `AllBut${missing.join('And')}`;
  await lab.hub.db.insertInto('roles').values({ name, entitlements: Entitlement.filter((e) => !missing.includes(e)) }).execute();
  const login = `${name.toLowerCase()}@example.com`;
  const { token } = await lab.addUser(login, [name]);
  const { id } = await lab.hub.db.selectFrom('users').select('id').where('login', '=', login).executeTakeFirstOrThrow();
  return { login, token, id };
}

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1 });
  const adminRow = await lab.hub.db.selectFrom('users').select('id').where('login', '=', 'admin').executeTakeFirstOrThrow();
  admin = { login: 'admin', token: lab.adminToken, id: adminRow.id };
  for (const e of Entitlement) without.set(e, await userWithout([e]));
  // UserModify alone also allows changing oneself: the self case lacks both.
  without.set('UserModifySelf', await userWithout(['UserModifySelf', 'UserModify']));
  const [device] = await (await lab.api(admin, '/Device')).json() as { id: string }[];
  real.dev = device.id;
  const form = new FormData();
  form.append('upload', new Blob([readFileSync(fixture('ContactManager.apk'))]), 'ContactManager.apk');
  const uploaded = await (await lab.api(admin, '/Application?add&wait=true', { method: 'POST', body: form })).json() as { data: { id: string } };
  real.app = uploaded.data.id;
  // First requests record UserLogin events; make them before the snapshots.
  for (const who of [admin, ...without.values()]) await lab.api(who, '/Service');
}, 120_000);

afterAll(() => lab?.stop(), 60_000);

const denied = (e: EntitlementName) => JSON.stringify({ isSuccess: false, errorMessage: `User does not have required entitlement: ${e}`, errorCode: 'ENTITLEMENT_REQUIRED' });
const JSON_TYPE = { 'content-type': 'application/json' };
const FORM_TYPE = { 'content-type': 'application/x-www-form-urlencoded' };

interface Case {
  entitlement: EntitlementName;
  name: string;
  method?: 'GET' | 'POST';
  /** `{dev}`, `{app}`, `{self}`, `{admin}` are replaced; the request runs once per identifier set. */
  path: string;
  body?: string | (() => FormData);
  headers?: Record<string, string>;
  /** The exact answer; default: the missing-entitlement failure. */
  expected?: string;
}

const apk = () => {
  const form = new FormData();
  form.append('f81d4fae-7dec-41d0-a765-00a0c91e6bf6', new Blob([readFileSync(fixture('ContactManager.apk'))]), 'ContactManager.apk');
  return form;
};

const CASES: Case[] = [
  { entitlement: 'ApplicationList', name: 'GET /Application is []', method: 'GET', path: '/Application?id={app}', expected: '[]' },
  { entitlement: 'ApplicationList', name: 'GET /Report/History', method: 'GET', path: '/Report/History?deviceId={dev}' },
  { entitlement: 'ApplicationModify', name: 'POST /Application?update', path: '/Application?update&id={app}', body: '{displayName:"x"}', headers: JSON_TYPE },
  { entitlement: 'ApplicationDelete', name: 'POST /Application?delete', path: '/Application?delete&id={app}' },
  { entitlement: 'ApplicationDelete', name: 'POST /Application delete=&all=True (C# form)', path: '/Application', body: 'delete=&id={app}&all=True', headers: FORM_TYPE },
  { entitlement: 'ApplicationUpload', name: 'POST /Application?add (GUID-named part)', path: '/Application?add', body: apk },
  { entitlement: 'ApplicationUpload', name: 'POST /Application?add&wait=true', path: '/Application?add&wait=true', body: apk },
  { entitlement: 'DeviceApplicationManagement', name: 'install (wait=true)', path: '/Application?action=install&id={app}&deviceId={dev}&wait=true' },
  { entitlement: 'DeviceApplicationManagement', name: 'uninstall', path: '/Application?action=uninstall&id={app}&deviceId={dev}' },
  { entitlement: 'DeviceApplicationManagement', name: 'uninstallBundle', path: '/Application', body: 'action=UninstallBundle&bundleId=com.example.android.contactmanager&deviceId={dev}&removedata=', headers: FORM_TYPE },
  { entitlement: 'DeviceApplicationManagement', name: 'reset uninstallAll=true', path: '/Device?action=reset&id={dev}&uninstallAll=true&reboot=false' },
  { entitlement: 'DeviceApplicationManagement', name: 'reset with the default uninstallAll', path: '/Device?action=reset&id={dev}' },
  { entitlement: 'DeviceConnect', name: 'retain', path: '/Device?action=retain&id={dev}' },
  { entitlement: 'DeviceConnect', name: 'launch (wait=true)', path: '/Application?action=launch&id={app}&deviceId={dev}&wait=true' },
  { entitlement: 'DeviceList', name: 'GET /Device is []', method: 'GET', path: '/Device?id={app}', expected: '[]' },
  { entitlement: 'DeviceList', name: 'GET /Device/Available is []', method: 'GET', path: '/Device/Available', expected: '[]' },
  { entitlement: 'DeviceList', name: 'GET /Device/Log', method: 'GET', path: '/Device/Log?id={dev}' },
  { entitlement: 'DeviceList', name: 'GET /Device/AppiumLog', method: 'GET', path: '/Device/AppiumLog?id={dev}' },
  { entitlement: 'DeviceList', name: 'POST /Device?update', path: '/Device?update&id={dev}', body: '{"notes":"x"}', headers: JSON_TYPE },
  { entitlement: 'DeviceList', name: 'POST /Device?delete', path: '/Device?delete&id={dev}' },
  { entitlement: 'DeviceList', name: 'GET /Report/Usage', method: 'GET', path: '/Report/Usage' },
  { entitlement: 'DeviceModify', name: 'update name', path: '/Device?update&id={dev}', body: '{"Name":"x"}', headers: JSON_TYPE },
  { entitlement: 'DeviceModify', name: 'update slotNumber', path: '/Device?update&id={dev}', body: '{slotNumber:"17"}', headers: JSON_TYPE },
  { entitlement: 'DeviceModify', name: 'update notes (even beside an allowed key)', path: '/Device?update&id={dev}', body: '{"enabled":"True","notes":"x"}', headers: JSON_TYPE },
  { entitlement: 'DeviceDelete', name: 'POST /Device delete=&id= (C# form)', path: '/Device', body: 'delete=&id={dev}', headers: FORM_TYPE },
  { entitlement: 'DeviceDelete', name: 'update deleted', path: '/Device?update&id={dev}', body: '{"deleted":"invalid"}', headers: JSON_TYPE },
  { entitlement: 'DeviceReboot', name: 'reboot', path: '/Device', body: 'action=Reboot&id={dev}', headers: FORM_TYPE },
  { entitlement: 'DeviceReboot', name: 'reset reboot=true', path: '/Device?action=reset&id={dev}&uninstallAll=false&reboot=True' },
  { entitlement: 'DeviceEnablement', name: 'enable', path: '/Device?action=enable&id={dev}' },
  { entitlement: 'DeviceEnablement', name: 'disable', path: '/Device', body: 'action=Disable&id={dev}', headers: FORM_TYPE },
  { entitlement: 'DeviceEnablement', name: 'update enabled', path: '/Device?update&id={dev}', body: '{"Enabled":"False"}', headers: JSON_TYPE },
  { entitlement: 'UserList', name: 'GET /User?id=<admin> is []', method: 'GET', path: '/User?id={admin}', expected: '[]' },
  { entitlement: 'UserList', name: 'GET /Report/History', method: 'GET', path: '/Report/History' },
  { entitlement: 'UserList', name: 'GET /Report/Availability', method: 'GET', path: '/Report/Availability?window=00:00:30' },
  { entitlement: 'UserList', name: 'POST /Report?type=usage (QA form)', path: '/Report?type=usage' },
  { entitlement: 'UserModify', name: 'update another user', path: '/User?update&id={admin}', body: '{firstName:"x"}', headers: JSON_TYPE },
  { entitlement: 'UserModify', name: 'generateToken for another user', path: '/User?action=generateToken&id={admin}' },
  { entitlement: 'UserModifySelf', name: 'update oneself', path: '/User?update&id={self}', body: '{firstName:"x"}', headers: JSON_TYPE },
  { entitlement: 'UserModifySelf', name: 'generateToken for oneself', path: '/User', body: 'action=generateToken&id={self}', headers: FORM_TYPE },
  { entitlement: 'UserImport', name: 'POST /User?add', path: '/User?add&wait=true', body: '{Email:"new@example.com",Password:"Password"}', headers: JSON_TYPE },
  { entitlement: 'UserRolesModify', name: 'POST /Role?add', path: '/Role?add', body: '{"name":"Extra","entitlements":[]}', headers: JSON_TYPE },
  { entitlement: 'UserRolesModify', name: 'POST /Role?update', path: '/Role?update&name=Tester', body: '{"entitlements":["DeviceList"]}', headers: JSON_TYPE },
  { entitlement: 'UserRolesModify', name: 'POST /Role?delete', path: '/Role?delete&name=Tester' },
  { entitlement: 'UserRolesModify', name: 'user update with roles', path: '/User?update&id={self}', body: '{"roles":["Administrator"]}', headers: JSON_TYPE },
  { entitlement: 'UserRolesModify', name: 'user add with roles other than Tester', path: '/User?add', body: '{"Email":"r@example.com","roles":["Administrator"]}', headers: JSON_TYPE },
  { entitlement: 'SystemManageSettings', name: 'GET /Settings', method: 'GET', path: '/Settings' },
  { entitlement: 'SystemManageSettings', name: 'POST /Settings?update', path: '/Settings?update', body: '{"resetReboot":false}', headers: JSON_TYPE },
];

function fill(text: string, ids: { dev: string; app: string }, who: Who): string {
  return text.replace(/\{dev\}/g, ids.dev).replace(/\{app\}/g, ids.app).replace(/\{self\}/g, who.id).replace(/\{admin\}/g, admin.id);
}

test.each(CASES.map((c) => [c.entitlement, c.name, c] as const))('without %s: %s', async (entitlement, _name, c) => {
  const who = without.get(entitlement)!;
  const before = await snapshotTables(lab.hub.db);
  for (const ids of [real, unknown]) {
    const body = typeof c.body === 'function' ? c.body() : c.body === undefined ? undefined : fill(c.body, ids, who);
    const res = await lab.api(who, fill(c.path, ids, who), { method: c.method ?? 'POST', body, headers: c.headers });
    expect({ ids, status: res.status, body: await res.text() })
      .toEqual({ ids, status: 200, body: c.expected ?? denied(entitlement) });
  }
  expect(await snapshotTables(lab.hub.db)).toEqual(before);
});

test('every entitlement of the API has a denial case above', () => {
  const covered = new Set(CASES.map((c) => c.entitlement));
  // Metrics and USB hub endpoints (SystemManageUsbHubs, SystemViewGateways) are tested with their routes.
  const elsewhere = ['SystemManageUsbHubs', 'SystemViewGateways', 'DeviceReleaseAny'];
  expect(Entitlement.filter((e) => !covered.has(e) && !elsewhere.includes(e))).toEqual([]);
});

test('without DeviceReleaseAny another user\'s retain stays; with it the release succeeds', async () => {
  const who = without.get('DeviceReleaseAny')!;
  const retained = await (await lab.api(admin, `/Device?action=retain&id=${real.dev}`, { method: 'POST' })).json() as { isSuccess: boolean };
  expect(retained.isSuccess).toBe(true);
  const [device] = await (await lab.api(admin, `/Device?id=${real.dev}`)).json() as { name: string; retainedById: string }[];
  const refused = await lab.api(who, '/Device', { method: 'POST', body: `action=Release&id=${real.dev}`, headers: FORM_TYPE });
  expect(await refused.text()).toBe(JSON.stringify({ isSuccess: false, errorMessage: `Device '${device.name}' is in use by 'admin'.`, errorCode: 'DEVICE_IN_USE' }));
  const [still] = await (await lab.api(admin, `/Device?id=${real.dev}`)).json() as { retainedById: string }[];
  expect(still.retainedById).toBe(admin.id);
  const holder = without.get('DeviceConnect')!; // holds DeviceReleaseAny
  expect(await (await lab.api(holder, `/Device?action=release&id=${real.dev}`, { method: 'POST' })).text()).toBe('{"isSuccess":true}');
});

test('without UserList GET /User answers only the caller; without UserRolesModify GET /Role only the caller\'s roles', async () => {
  const who = without.get('UserList')!;
  const users = await (await lab.api(who, '/User?get=')).json() as { id: string; email: string }[];
  expect(users.map((u) => u.email)).toEqual([who.login]);
  const roles = await (await lab.api(without.get('UserRolesModify')!, '/Role')).json() as { name: string }[];
  expect(roles.map((r) => r.name)).toEqual(['AllButUserRolesModify']);
});

test('install without wait: the reply is an async id, and the poll yields the entitlement failure once (QA _1129)', async () => {
  const who = without.get('DeviceApplicationManagement')!;
  const started = await (await lab.api(who, `/Application?action=install&id=${real.app}&deviceId=${real.dev}`, { method: 'POST' }))
    .json() as { isSuccess: boolean; data: { asyncResponseId: string } };
  expect(started.isSuccess).toBe(true);
  const { value } = await waitFor(async () => {
    const poll = await (await lab.api(who, `/Async?get=&id=${started.data.asyncResponseId}`)).json() as { isComplete?: boolean };
    return poll.isComplete ? poll : undefined;
  }, 10_000, 'install job');
  expect(value).toEqual({ isComplete: true, data: JSON.parse(denied('DeviceApplicationManagement')) });
  const again = await (await lab.api(who, `/Async?id=${started.data.asyncResponseId}`)).json();
  expect(again).toEqual({ isSuccess: false, errorMessage: 'The async operation id is unknown, expired or already completed.' });
});
