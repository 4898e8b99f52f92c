import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { startHub, type RunningHub } from '../../src/server';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import type { FailureCode } from '@devicelab/shared';

/**
 * /User and /Role over HTTP as real clients call them: a real hub on its own test database, real Basic auth.
 * No gateway or devices are needed for these endpoints.
 */
const ADMIN_TOKEN = '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f';
let database: TestDatabase;
let hub: RunningHub;
let dataDir: string;
const errors: unknown[] = [];
const logger = pino({ level: 'error', hooks: { logMethod(args, method) { errors.push(args[0]); method.apply(this, args); } } },
  { write: () => undefined });
const tokens = new Map<string, string>([['admin', ADMIN_TOKEN]]);

beforeAll(async () => {
  database = await createTestDatabase({ maxConnections: 2 });
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'devicelab-users-'));
  hub = await startHub({ port: 0, host: '127.0.0.1', linkPort: 0, databaseUrl: database.url, dataDir,
    adminToken: ADMIN_TOKEN, uploadLimitBytes: 1024 * 1024 }, logger);
}, 60_000);
afterAll(async () => {
  await hub?.stop();
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});
afterEach(() => expect(errors).toEqual([]));

interface Call { method?: string; body?: string; json?: unknown; form?: string; login?: string; token?: string }
async function call(p: string, init: Call = {}) {
  const login = init.login ?? 'admin';
  const token = init.token ?? tokens.get(login) ?? '';
  const headers: Record<string, string> = { authorization: `Basic ${Buffer.from(`${login}:${token}`).toString('base64')}` };
  let body = init.body;
  if (init.json !== undefined) body = JSON.stringify(init.json);
  if (body !== undefined) headers['content-type'] = 'application/json; charset=utf-8';
  if (init.form !== undefined) { body = init.form; headers['content-type'] = 'application/x-www-form-urlencoded'; }
  const res = await fetch(`${hub.url}/apiv1${p}`, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), body, headers });
  return { status: res.status, text: await res.text() };
}
const post = (p: string, init: Call = {}) => call(p, { method: 'POST', ...init });
const ok = '{"isSuccess":true}';
const fail = (message: string, errorCode?: FailureCode, errorParameter?: string) =>
  JSON.stringify({ isSuccess: false, errorMessage: message, errorCode, errorParameter });
async function userId(login: string): Promise<string> {
  return JSON.parse((await call(`/User?UserName=${encodeURIComponent(login)}`)).text)[0].id;
}
/** Generates a token for `login` as admin and remembers it. */
async function giveToken(login: string): Promise<string> {
  const res = JSON.parse((await post(`/User?action=generateToken&id=${await userId(login)}`)).text);
  tokens.set(login, res.data.apiToken);
  return res.data.apiToken;
}

describe('POST /User?add', () => {
  it('imports a user (curl form, unquoted keys) and answers exactly {"isSuccess":true}', async () => {
    const res = await post('/User?add&wait=true', { body: '{Email:"Akd@Gmail.com",Password:"Password",firstName:"Ak",city:"Oslo"}' });
    expect(res).toEqual({ status: 200, text: ok });
    const list = JSON.parse((await call('/User?UserName=akd@gmail.com')).text);
    expect(list).toEqual([expect.objectContaining({ email: 'Akd@Gmail.com', isActive: true, firstName: 'Ak', city: 'Oslo',
      roles: ['Tester'], properties: [] })]);
    expect(JSON.stringify(list)).not.toMatch(/password|token/i);
    expect(await post('/User?add', { body: '{Email:"admins@corp.com",roles:["Administrator","Tester"]}' })).toEqual({ status: 200, text: ok });
    expect(JSON.parse((await call('/User?UserName=admins@corp.com')).text)[0].roles).toEqual(['Administrator', 'Tester']);
  });

  it('curl -d without a Content-Type (labelled urlencoded) still reads the JSON body', async () => {
    expect(await post('/User?add', { form: '{Email:"curl@corp.com"}' })).toEqual({ status: 200, text: ok });
    expect(JSON.parse((await call('/User?email=curl@corp.com')).text)).toHaveLength(1);
  });

  it('the C# client\'s body-less add= form fails cleanly', async () => {
    expect(await post('/User', { form: 'add=' })).toEqual({ status: 200, text: fail('A new user needs an Email (or UserName) in a JSON body.') });
  });

  it('duplicates fail with the PostgreSQL text; the login stays unique ignoring case', async () => {
    const res = JSON.parse((await post('/User?add&wait=true', { body: '{Email:"AKD@gmail.com"}' })).text);
    expect(res.isSuccess).toBe(false);
    expect(res.errorMessage).toMatch(/^ERROR: 23505: /);
  });
});

describe('GET /User', () => {
  it('is a bare array; every filter of spec 2.4 works, case-insensitively; get= and empty values are ignored', async () => {
    await post('/User?add', { json: { UserName: 'filters@corp.com', FirstName: 'Fi', MiddleName: 'Mi', LastName: 'La', Notes: 'n',
      Organization: 'Org', Title: 'Ti', Location: 'Lo', Address1: 'A1', Address2: 'A2', City: 'Ci', Region: 'Re', PostalCode: 'PC',
      Country: 'Co', HomePhone: 'HP', MobilePhone: 'MP', OfficePhone: 'OP', FaxPhone: 'FP', isActive: 'False' } });
    const id = await userId('filters@corp.com');
    const query = 'get=&Id=' + id + '&UserName=FILTERS@corp.com&IsActive=false&FirstName=fi&MiddleName=mi&LastName=la&Notes=n' +
      '&Organization=org&Title=ti&Location=lo&Address1=a1&Address2=a2&City=ci&Region=re&PostalCode=pc&Country=co&HomePhone=hp' +
      '&MobilePhone=mp&OfficePhone=op&FaxPhone=fp&pretty=';
    const res = await call(`/User?${query}`);
    const [u] = JSON.parse(res.text);
    expect(JSON.parse(res.text)).toHaveLength(1);
    expect(Object.keys(u)).toEqual(['id', 'email', 'isActive', 'firstName', 'middleName', 'lastName', 'notes', 'organization',
      'title', 'location', 'address1', 'address2', 'city', 'region', 'postalCode', 'country', 'homePhone', 'mobilePhone',
      'officePhone', 'faxPhone', 'createdDate', 'roles', 'properties']);
    expect(u).toMatchObject({ id, email: 'filters@corp.com', isActive: false, faxPhone: 'FP' });
    expect((await call('/User?city=Nowhere')).text).toBe('[]');
    expect((await call(`/User?id=${id}&isActive=true`)).text).toBe('[]');
  });

  it('bad Guid and bool give the vendor texts', async () => {
    expect(await call('/User?id=abc')).toEqual({ status: 200, text: fail('Invalid Guid format: abc', 'INVALID_PARAMETER', 'id') });
    expect(await call('/User?isActive=invalid'))
      .toEqual({ status: 200, text: fail('Value is not equivalent to either TrueString or FalseString.', 'INVALID_PARAMETER', 'isActive') });
  });

  it('without UserList only the caller comes back (filters still applied); with a login, lastLoginDate is set', async () => {
    await giveToken('akd@gmail.com');
    const own = JSON.parse((await call('/User', { login: 'akd@gmail.com' })).text);
    expect(own.map((u: { email: string }) => u.email)).toEqual(['Akd@Gmail.com']);
    expect(own[0].lastLoginDate).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect((await call('/User?UserName=admin', { login: 'akd@gmail.com' })).text).toBe('[]');
    expect(JSON.parse((await call('/User')).text).length).toBeGreaterThanOrEqual(4);
  });
});

describe('POST /User?update', () => {
  it('updates profile, login (case kept), password and properties; the C# JSON shape with update= works', async () => {
    const id = await userId('filters@corp.com');
    expect(await post(`/User?update&id=${id}`, { body: '{UserName:"APIUPDATEUSER1@UPDATEUSER.COM",homephone:"555",Password:"New pass",properties:[{name:"team",value:"qa"}]}' }))
      .toEqual({ status: 200, text: ok });
    expect(await post(`/User?update=&id=${id}`, { json: { IsActive: 'True', Notes: '' } })).toEqual({ status: 200, text: ok });
    const [u] = JSON.parse((await call(`/User?id=${id}`)).text);
    expect(u).toMatchObject({ email: 'APIUPDATEUSER1@UPDATEUSER.COM', homePhone: '555', isActive: true, properties: [{ name: 'team', value: 'qa' }] });
    expect(u.notes).toBeUndefined();
  });

  it('gives the vendor texts and changes nothing on failure', async () => {
    const id = await userId('APIUPDATEUSER1@UPDATEUSER.COM');
    expect(await post(`/User?update&id=${id}`, { body: '{UserName:"333339332323",city:"Changed"}' }))
      .toEqual({ status: 200, text: fail('Invalid username, an email is expected.\nParameter name: UserName') });
    const dup = JSON.parse((await post(`/User?update&id=${id}`, { body: '{UserName:"akd@GMAIL.com",city:"Changed"}' })).text);
    expect(dup.errorMessage).toMatch(/^ERROR: 23505: /);
    expect(JSON.parse((await call(`/User?id=${id}`)).text)[0]).toMatchObject({ email: 'APIUPDATEUSER1@UPDATEUSER.COM', city: 'Ci' });
    expect(await post('/User?update&id=abc', { body: '{}' })).toEqual({ status: 200, text: fail('Invalid Guid format: abc', 'INVALID_PARAMETER', 'id') });
  });

  it('a Tester may change only themself; roles need UserRolesModify', async () => {
    const self = await userId('akd@gmail.com');
    const other = await userId('admins@corp.com');
    expect(await post(`/User?update&id=${self}`, { login: 'akd@gmail.com', body: '{lastName:"Self"}' })).toEqual({ status: 200, text: ok });
    expect(await post(`/User?update&id=${other}`, { login: 'akd@gmail.com', body: '{lastName:"Other"}' }))
      .toEqual({ status: 200, text: fail('User does not have required entitlement: UserModify', 'ENTITLEMENT_REQUIRED') });
    expect(await post(`/User?update&id=${self}`, { login: 'akd@gmail.com', body: '{roles:["Administrator"]}' }))
      .toEqual({ status: 200, text: fail('User does not have required entitlement: UserRolesModify', 'ENTITLEMENT_REQUIRED') });
    expect(await post('/User?add', { login: 'akd@gmail.com', body: '{Email:"new@corp.com"}' }))
      .toEqual({ status: 200, text: fail('User does not have required entitlement: UserImport', 'ENTITLEMENT_REQUIRED') });
  });
});

describe('tokens and authentication', () => {
  it('generateToken: own with UserModifySelf; the old token stops working at once', async () => {
    const self = await userId('akd@gmail.com');
    const old = tokens.get('akd@gmail.com')!;
    const res = await post(`/User?action=generateToken&id=${self}`, { login: 'akd@gmail.com' });
    const fresh = JSON.parse(res.text).data.apiToken;
    expect(res.text).toMatch(/^\{"isSuccess":true,"data":\{"apiToken":"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"\}\}$/);
    expect((await call('/User', { login: 'akd@gmail.com', token: old })).status).toBe(401);
    expect((await call('/User', { login: 'akd@gmail.com', token: fresh })).status).toBe(200);
    tokens.set('akd@gmail.com', fresh);
    expect(await post(`/User?action=GenerateToken&id=${await userId('admin')}`, { login: 'akd@gmail.com' }))
      .toEqual({ status: 200, text: fail('User does not have required entitlement: UserModify', 'ENTITLEMENT_REQUIRED') });
  });

  it('a deactivated user gets 401', async () => {
    const id = await userId('akd@gmail.com');
    await post(`/User?update&id=${id}`, { body: '{isActive:false}' });
    const res = await call('/User', { login: 'akd@gmail.com' });
    expect(res.status).toBe(401);
    await post(`/User?update&id=${id}`, { body: '{isActive:true}' });
    expect((await call('/User', { login: 'akd@gmail.com' })).status).toBe(200);
  });

  it('the admin cannot remove the last Administrator (itself)', async () => {
    const admins = await userId('admins@corp.com');
    await post(`/User?update&id=${admins}`, { body: '{roles:["Tester"]}' });
    const res = await post(`/User?update&id=${await userId('admin')}`, { body: '{roles:["Tester"]}' });
    expect(res).toEqual({ status: 200, text: fail('The last active Administrator cannot lose the Administrator role or be deactivated.') });
    expect((await call('/Role')).status).toBe(200);
  });
});

describe('/Role (extension)', () => {
  it('adds a role, assigns it, and the holder gets its entitlements; in-use roles cannot be deleted', async () => {
    expect(await post('/Role?add', { json: { name: 'Listers', entitlements: ['UserList'] } })).toEqual({ status: 200, text: ok });
    const roles = JSON.parse((await call('/Role')).text);
    expect(roles.find((r: { name: string }) => r.name === 'Listers')).toMatchObject({ entitlements: ['UserList'], isBuiltIn: false });
    const id = await userId('akd@gmail.com');
    expect(await post(`/User?update&id=${id}`, { json: { roles: ['Tester', 'listers'] } })).toEqual({ status: 200, text: ok });
    expect(JSON.parse((await call('/User', { login: 'akd@gmail.com' })).text).length).toBeGreaterThan(1);
    expect(JSON.parse((await call('/Role', { login: 'akd@gmail.com' })).text).map((r: { name: string }) => r.name)).toEqual(['Listers', 'Tester']);
    expect(await post('/Role', { form: 'delete=&name=Listers' }))
      .toEqual({ status: 200, text: fail("Role 'Listers' is assigned to 1 user(s); remove it from them before deleting it.") });
    expect(await post('/Role?delete&name=Listers', { login: 'akd@gmail.com' }))
      .toEqual({ status: 200, text: fail('User does not have required entitlement: UserRolesModify', 'ENTITLEMENT_REQUIRED') });
    expect(await post('/Role?update&name=Administrator', { json: { name: 'Boss' } }))
      .toEqual({ status: 200, text: fail("The built-in role 'Administrator' cannot be renamed.") });
    expect(JSON.parse((await post('/Role?add', { json: { name: 'Bad', entitlements: ['Nope'] } })).text).errorMessage)
      .toMatch(/^Unknown entitlement 'Nope'\./);
    expect(await post('/Role?update&name=Listers', { json: { entitlements: ['userlist', 'DeviceList'] } })).toEqual({ status: 200, text: ok });
    expect(JSON.parse((await call('/Role')).text).find((r: { name: string }) => r.name === 'Listers').entitlements)
      .toEqual(['DeviceList', 'UserList']);
  });
});

describe('names that read as what they are', () => {
  const errorOf = async (res: Promise<{ text: string }>) => JSON.parse((await res).text).errorMessage as string | undefined;

  it('refuses a login or role name confusable with an existing one: Cyrillic, Greek, digit look-alikes', async () => {
    expect(await post('/User?add', { json: { userName: 'carol@corp.com' } })).toEqual({ status: 200, text: ok });
    // "с" and "о" below are Cyrillic; "Ι" is a Greek capital iota.
    expect(await errorOf(post('/User?add', { json: { userName: 'сarol@cоrp.com' } })))
      .toBe("The user name 'сarol@cоrp.com' can be mistaken for the existing 'carol@corp.com'; choose another.");
    expect(await errorOf(post('/User?add', { json: { userName: 'CAROL@C0RP.COM' } }))).toMatch(/can be mistaken for the existing 'carol@corp.com'/);
    expect(await errorOf(post('/Role?add', { json: { name: 'Аdministrator' } })))
      .toBe("The role name 'Аdministrator' can be mistaken for the existing 'Administrator'; choose another.");
    expect(await errorOf(post('/Role?add', { json: { name: 'ΤΕSΤΕR' } }))).toMatch(/can be mistaken for the existing 'Tester'/);
    expect(await post('/Role?add', { json: { name: 'Operators' } })).toEqual({ status: 200, text: ok });
    expect(await errorOf(post('/Role?update&name=Operators', { json: { name: 'Теster' } }))).toMatch(/mistaken for the existing 'Tester'/);
    expect(await post('/User?add', { json: { userName: 'dave@corp.com' } })).toEqual({ status: 200, text: ok });
    const carol = await userId('carol@corp.com');
    expect(await errorOf(post(`/User?update&id=${carol}`, { json: { userName: 'dаve@corp.com' } }))).toMatch(/mistaken for the existing 'dave@corp.com'/);
    // Nothing was stored; names that really differ, and a user's own name in other letter case, pass.
    expect(JSON.parse((await call('/Role')).text).map((r: { name: string }) => r.name)).not.toContain('Аdministrator');
    expect(JSON.parse((await call('/User?UserName=сarol@cоrp.com')).text)).toEqual([]);
    expect(await post('/User?add', { json: { userName: 'caroline@corp.com' } })).toEqual({ status: 200, text: ok });
    expect(await post(`/User?update&id=${carol}`, { json: { userName: 'Carol@Corp.com' } })).toEqual({ status: 200, text: ok });
    // An exact duplicate ignoring case still fails as clients expect (the unique index's text).
    expect(await errorOf(post('/Role?add', { json: { name: 'operators' } }))).toBe("A role named 'operators' already exists.");
  });

  it('refuses control and format characters and stores names in NFC', async () => {
    expect(await errorOf(post('/User?add', { json: { userName: 'bell\u0007@corp.com' } })))
      .toBe('UserName must not contain control, format or separator characters.');
    expect(await errorOf(post('/User?add', { json: { userName: 'evil\u202e@corp.com' } })))
      .toBe('UserName must not contain control, format or separator characters.');
    expect(await errorOf(post('/Role?add', { json: { name: 'Zero\u200bWidth' } })))
      .toBe('A role name must not contain control, format or separator characters.');
    expect(await errorOf(post('/User?add', { json: { userName: 'named@corp.com', firstName: 'Ann\u0000' } }))).toMatch(/NUL|control/);
    expect(await errorOf(post('/User?add', { json: { userName: 'named@corp.com', lastName: 'Lee\u2028' } })))
      .toBe('lastName must not contain control, format or separator characters.');
    // "é" sent decomposed (e + U+0301) is stored composed: one name, one spelling.
    expect(await post('/User?add', { json: { userName: 'rene\u0301@corp.com' } })).toEqual({ status: 200, text: ok });
    expect(JSON.parse((await call('/User?UserName=ren%C3%A9@corp.com')).text)[0].email).toBe('ren\u00e9@corp.com');
    expect(await errorOf(post('/User?add', { json: { userName: 'ren\u00e9@corp.com' } }))).toMatch(/^ERROR: 23505/);
  });
});
