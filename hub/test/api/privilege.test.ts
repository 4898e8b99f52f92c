/**
 * Nobody reaches entitlements they do not hold, over HTTP on a real hub: a user administrator
 * (UserList, UserModify, UserImport, UserRolesModify, not Administrator) may neither obtain a token for, nor change,
 * a user holding more than it does, nor assign, create or edit a role granting more than it holds. Each refusal is
 * a clear failure and changes no table; the real admin keeps working.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { Entitlement } from '@devicelab/shared';
import { startHub, type RunningHub } from '../../src/server';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { snapshotTables } from '../support/table-snapshot';

const ADMIN_TOKEN = '2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f';
const HELD = ['UserList', 'UserModify', 'UserImport', 'UserRolesModify'] as const;
const NOT_HELD = Entitlement.filter((e) => !(HELD as readonly string[]).includes(e)).join(', ');
let database: TestDatabase;
let hub: RunningHub;
let dataDir: string;
const tokens = new Map<string, string>([['admin', ADMIN_TOKEN]]);
const ids = new Map<string, string>();

async function call(p: string, login: string, body?: string) {
  // The reads used here; every other request is a POST.
  const method = p === '/Service' || p === '/User' || p.startsWith('/User?UserName=') ? 'GET' : 'POST';
  const headers: Record<string, string> = {
    authorization: `Basic ${Buffer.from(`${login}:${tokens.get(login)}`).toString('base64')}`,
  };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${hub.url}/apiv1${p}`, { method, body, headers });
  return { status: res.status, text: await res.text() };
}
const ok = { status: 200, text: '{"isSuccess":true}' };
const fail = (message: string) => ({ status: 200, text: JSON.stringify({ isSuccess: false, errorMessage: message }) });
const userBeyond = (login: string, notHeld: string) =>
  fail(`User '${login}' holds entitlements you do not hold (${notHeld}); only a user who holds all of them can change this user or generate its token.`);
const roleBeyond = (name: string, notHeld: string) =>
  fail(`Role '${name}' grants entitlements you do not hold (${notHeld}); only a user who holds all of them can assign, change or delete this role.`);
const grantBeyond = (notHeld: string) => fail(`You cannot give a role entitlements you do not hold (${notHeld}).`);

/** Adds a user with these roles (as admin), gives it a token and makes its first request (a UserLogin event). */
async function addUser(login: string, roles: string[]): Promise<void> {
  expect(await call('/User?add', 'admin', JSON.stringify({ Email: login, roles }))).toEqual(ok);
  const [user] = JSON.parse((await call(`/User?UserName=${login}`, 'admin')).text) as { id: string }[];
  ids.set(login, user.id);
  const generated = await call(`/User?action=generateToken&id=${user.id}`, 'admin');
  tokens.set(login, JSON.parse(generated.text).data.apiToken);
  await call('/Service', login);
}

beforeAll(async () => {
  database = await createTestDatabase({ maxConnections: 2 });
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'devicelab-privilege-'));
  hub = await startHub({ port: 0, host: '127.0.0.1', linkPort: 0, databaseUrl: database.url, dataDir,
    adminToken: ADMIN_TOKEN, uploadLimitBytes: 1024 * 1024 }, pino({ level: 'silent' }));
  await call('/Service', 'admin');
  const [admin] = JSON.parse((await call('/User?UserName=admin', 'admin')).text) as { id: string }[];
  ids.set('admin', admin.id);
  for (const [name, entitlements] of [['UserAdmins', HELD], ['Listers', ['UserList']], ['Settings', ['SystemManageSettings']]] as const) {
    expect(await call('/Role?add', 'admin', JSON.stringify({ name, entitlements }))).toEqual(ok);
  }
  await addUser('ua@corp.com', ['UserAdmins']);
  await addUser('boss@corp.com', ['Administrator']);
  await addUser('lister@corp.com', ['Listers']);
}, 60_000);
afterAll(async () => {
  await hub?.stop();
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Every request is refused with `expected` and changes no table. */
async function refused(requests: [string, string | undefined][], expected: { status: number; text: string }) {
  const before = await snapshotTables(hub.db);
  for (const [p, body] of requests) expect({ p, ...(await call(p, 'ua@corp.com', body)) }).toEqual({ p, ...expected });
  expect(await snapshotTables(hub.db)).toEqual(before);
}

test('a token for an Administrator\'s account is refused; the real admin keeps working', async () => {
  await refused([[`/User?action=generateToken&id=${ids.get('admin')}`, undefined]], userBeyond('admin', NOT_HELD));
  await refused([[`/User?action=generateToken&id=${ids.get('boss@corp.com')}`, undefined]], userBeyond('boss@corp.com', NOT_HELD));
  expect((await call('/Service', 'admin')).status).toBe(200);
  expect(JSON.parse((await call('/User', 'admin')).text)).toHaveLength(4);
});

test('an Administrator\'s account cannot be changed, disabled or given other roles', async () => {
  for (const login of ['admin', 'boss@corp.com']) {
    await refused([
      [`/User?update&id=${ids.get(login)}`, '{"firstName":"Mallory"}'],
      [`/User?update&id=${ids.get(login)}`, '{"isActive":false}'],
      [`/User?update&id=${ids.get(login)}`, '{"Password":"taken-over"}'],
      [`/User?update&id=${ids.get(login)}`, '{"roles":["Listers"]}'],
    ], userBeyond(login, NOT_HELD));
  }
});

test('a role granting entitlements the caller lacks cannot be assigned, to itself or to a new user', async () => {
  const adminNotHeld = NOT_HELD;
  await refused([[`/User?update&id=${ids.get('ua@corp.com')}`, '{"roles":["UserAdmins","Administrator"]}']],
    roleBeyond('Administrator', adminNotHeld));
  await refused([[`/User?update&id=${ids.get('lister@corp.com')}`, '{"roles":["Settings"]}']], roleBeyond('Settings', 'SystemManageSettings'));
  await refused([['/User?add', '{"Email":"sock@corp.com","Password":"pw","roles":["Administrator"]}']], roleBeyond('Administrator', adminNotHeld));
  // The default role of an imported user grants what Testers hold: a user administrator without it cannot create one.
  await refused([['/User?add', '{"Email":"sock@corp.com","Password":"pw"}']],
    roleBeyond('Tester', 'ApplicationList, ApplicationUpload, DeviceApplicationManagement, DeviceConnect, DeviceList, DeviceReboot, SystemViewGateways, UserModifySelf'));
});

test('a role cannot be given, nor can one be changed or deleted that grants, entitlements the caller lacks', async () => {
  await refused([['/Role?add', '{"name":"Escalate","entitlements":["UserList","SystemManageSettings"]}']], grantBeyond('SystemManageSettings'));
  await refused([['/Role?update&name=Listers', '{"entitlements":["UserList","DeviceReboot"]}']], grantBeyond('DeviceReboot'));
  await refused([
    ['/Role?update&name=Settings', '{"entitlements":[]}'],
    ['/Role?update&name=Settings', '{"name":"Renamed"}'],
    ['/Role?delete&name=Settings', undefined],
  ], roleBeyond('Settings', 'SystemManageSettings'));
  await refused([['/Role?update&name=Administrator', '{"name":"Administrator"}']], roleBeyond('Administrator', NOT_HELD));
});

test('within its own entitlements the user administrator still works', async () => {
  const lister = ids.get('lister@corp.com')!;
  expect(await call(`/User?update&id=${lister}`, 'ua@corp.com', '{"firstName":"Lis","roles":["Listers","UserAdmins"]}')).toEqual(ok);
  const generated = JSON.parse((await call(`/User?action=generateToken&id=${lister}`, 'ua@corp.com')).text);
  expect(generated).toEqual({ isSuccess: true, data: { apiToken: expect.any(String) } });
  expect(await call('/Role?add', 'ua@corp.com', '{"name":"Importers","entitlements":["UserImport","UserList"]}')).toEqual(ok);
  expect(await call('/User?add', 'ua@corp.com', '{"Email":"imp@corp.com","roles":["Importers"]}')).toEqual(ok);
  expect(await call(`/User?action=generateToken&id=${ids.get('ua@corp.com')}`, 'ua@corp.com')).toMatchObject({ status: 200 });
});
