import { builtInRoles, TESTER_ROLE, type Entitlement } from '@devicelab/shared';
import type { AuthenticatedUser } from '../../src/auth/authenticated-user';
import { verifyPassword } from '../../src/auth/passwords';
import { ensureBuiltInRolesAndAdmin, findUserByCredentials, loadAuthenticatedUser } from '../../src/auth/users';
import { userChangeRequest } from '../../src/api/user-body';
import { INVALID_USERNAME, listUsers } from '../../src/domain/users';
import {
  ADMIN_CANNOT_BE_RENAMED, generateUserToken, importUser, LAST_ADMINISTRATOR, modifyUser, NO_LOGIN_GIVEN,
} from '../../src/domain/users-changes';
import { JsonBody } from '../../src/http/json-body';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let t: TestDatabase;
let admin: AuthenticatedUser;
beforeAll(async () => {
  t = await createTestDatabase();
  await ensureBuiltInRolesAndAdmin(t.db);
  admin = await callerByLogin('admin');
});
afterAll(() => t.drop());

const body = (text: string) => userChangeRequest(() => JsonBody.parse(text));

async function callerByLogin(login: string): Promise<AuthenticatedUser> {
  const row = await t.db.selectFrom('users').selectAll().where('login', '=', login).executeTakeFirstOrThrow();
  return loadAuthenticatedUser(t.db, row);
}

/** A user holding exactly these entitlements, through a role of its own. */
async function userWith(login: string, entitlements: Entitlement[]): Promise<AuthenticatedUser> {
  const role = `role-of-${login}`;
  await t.db.insertInto('roles').values({ name: role, entitlements }).execute();
  await importUser(t.db, admin, body(JSON.stringify({ Email: login, roles: [role] })));
  return callerByLogin(login);
}

const idOf = async (login: string) =>
  (await t.db.selectFrom('users').select('id').where('login', '=', login).executeTakeFirstOrThrow()).id;

describe('import (POST /User?add)', () => {
  it('stores every field, defaults roles to Tester, hashes the password and records User Created', async () => {
    await importUser(t.db, admin, body(`{Email:"Jane.Doe@Corp.com",Password:"Password",firstName:"Jane",lastName:"Doe",
      city:"Oslo",homephone:"123",notes:"line1\\nline2",isActive:"True",properties:[{name:"team",value:"qa"}]}`));
    const [jane] = await listUsers(t.db, admin, { userName: 'jane.doe@corp.com' });
    expect(jane).toMatchObject({
      email: 'Jane.Doe@Corp.com', isActive: true, firstName: 'Jane', lastName: 'Doe', city: 'Oslo', homePhone: '123',
      notes: 'line1\nline2', roles: ['Tester'], properties: [{ name: 'team', value: 'qa' }],
    });
    expect(jane.createdDate).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(jane.lastLoginDate).toBeUndefined();
    expect(JSON.stringify(jane)).not.toMatch(/password|token/i);
    const row = await t.db.selectFrom('users').selectAll().where('id', '=', jane.id).executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^scrypt\$/);
    expect(await verifyPassword('Password', row.password_hash)).toBe(true);
    expect(await verifyPassword('password', row.password_hash)).toBe(false);
    const events = await t.db.selectFrom('events').selectAll().where('user_id', '=', jane.id).execute();
    expect(events).toEqual([expect.objectContaining({
      event_type: 'UserCreated', message: 'User Created', performed_by_id: admin.id, string_value: 'Jane.Doe@Corp.com',
    })]);
  });

  it('stores the given roles; UserName works like Email', async () => {
    await importUser(t.db, admin, body('{UserName:"boss@corp.com",roles:["Administrator","Tester"]}'));
    const [boss] = await listUsers(t.db, admin, { userName: 'boss@corp.com' });
    expect(boss.roles).toEqual(['Administrator', 'Tester']);
  });

  it('fails cleanly and stores nothing for bad input', async () => {
    const before = await t.db.selectFrom('users').select('id').execute();
    await expect(importUser(t.db, admin, userChangeRequest(() => new JsonBody({})))).rejects.toThrow(NO_LOGIN_GIVEN);
    await expect(importUser(t.db, admin, body('{Email:"333339332323"}'))).rejects.toThrow(INVALID_USERNAME);
    await expect(importUser(t.db, admin, body('{Email:"admin"}'))).rejects.toThrow(INVALID_USERNAME);
    await expect(importUser(t.db, admin, body('{Email:"x@corp.com",roles:["Astronaut"]}'))).rejects.toThrow("Role 'Astronaut' not found.");
    await expect(importUser(t.db, admin, body('{Email:"x@corp.com",shoeSize:"9"}'))).rejects.toThrow(/Property 'shoesize' cannot be updated/);
    await expect(importUser(t.db, admin, body('{Email:"x@corp.com",isActive:"maybe"}')))
      .rejects.toThrow('Value is not equivalent to either TrueString or FalseString.');
    await expect(importUser(t.db, admin, body('{Email:"JANE.DOE@corp.com"}'))).rejects.toThrow(/^ERROR: 23505: /);
    expect(await t.db.selectFrom('users').select('id').execute()).toHaveLength(before.length);
  });

  it('needs UserImport, and UserRolesModify for roles other than Tester', async () => {
    // The importer must hold what the new user's roles grant (nobody grants entitlements they lack).
    const importer = await userWith('importer@corp.com', ['UserImport', ...builtInRoles[TESTER_ROLE]]);
    await expect(importUser(t.db, await userWith('bare-importer@corp.com', ['UserImport']), body('{Email:"d@corp.com"}')))
      .rejects.toThrow(/^Role 'Tester' grants entitlements you do not hold \(ApplicationList, /);
    await expect(importUser(t.db, (await userWith('nobody@corp.com', [])), body('{Email:"a@corp.com"}')))
      .rejects.toThrow('User does not have required entitlement: UserImport');
    await expect(importUser(t.db, importer, body('{Email:"b@corp.com",roles:["Administrator"]}')))
      .rejects.toThrow('User does not have required entitlement: UserRolesModify');
    await importUser(t.db, importer, body('{Email:"c@corp.com",roles:["tester"]}'));
    expect((await listUsers(t.db, admin, { userName: 'c@corp.com' }))[0].roles).toEqual(['Tester']);
  });
});

describe('list (GET /User)', () => {
  it('filters by every kind of field, ignoring letter case', async () => {
    await importUser(t.db, admin, body('{Email:"filter@corp.com",firstName:"Fil",middleName:"M",lastName:"Ter",organization:"ACME",faxPhone:"99",isActive:false}'));
    const id = await idOf('filter@corp.com');
    const logins = async (f: Parameters<typeof listUsers>[2]) => (await listUsers(t.db, admin, f)).map((u) => u.email);
    expect(await logins({ id })).toEqual(['filter@corp.com']);
    expect(await logins({ userName: 'FILTER@corp.com' })).toEqual(['filter@corp.com']);
    expect(await logins({ names: { firstName: 'fil', middleName: 'm', lastName: 'ter' } })).toEqual(['filter@corp.com']);
    expect(await logins({ profile: { organization: 'acme', faxPhone: '99' } })).toEqual(['filter@corp.com']);
    expect(await logins({ isActive: false })).toEqual(['filter@corp.com']);
    expect(await logins({ isActive: true })).not.toContain('filter@corp.com');
    expect(await logins({ profile: { organization: 'other' } })).toEqual([]);
    expect(await logins({ id: '00000000-0000-4000-8000-000000000000' })).toEqual([]);
  });

  it('without UserList returns only the caller, filters still applied', async () => {
    const self = await userWith('self@corp.com', ['UserModifySelf']);
    expect((await listUsers(t.db, self)).map((u) => u.email)).toEqual(['self@corp.com']);
    expect(await listUsers(t.db, self, { userName: 'admin' })).toEqual([]);
    expect((await listUsers(t.db, self, { userName: 'self@corp.com' })).map((u) => u.email)).toEqual(['self@corp.com']);
    expect((await listUsers(t.db, admin)).length).toBeGreaterThan(3);
  });
});

describe('update (POST /User?update)', () => {
  it('changes login (case kept), names, profile, isActive, password, roles and properties', async () => {
    await importUser(t.db, admin, body('{Email:"upd@corp.com",notes:"old",city:"Rome"}'));
    const id = await idOf('upd@corp.com');
    await modifyUser(t.db, admin, id, body(`{UserName:"APIUPDATEUSER@UPDATEUSER.COM",firstName:"New",notes:"",
      Password:"Secret 2",roles:["Administrator"],properties:{k:"v"},isActive:"False"}`));
    const [u] = await listUsers(t.db, admin, { id });
    expect(u).toMatchObject({ email: 'APIUPDATEUSER@UPDATEUSER.COM', firstName: 'New', city: 'Rome', isActive: false,
      roles: ['Administrator'], properties: [{ name: 'k', value: 'v' }] });
    expect(u.notes).toBeUndefined();
    const row = await t.db.selectFrom('users').select('password_hash').where('id', '=', id).executeTakeFirstOrThrow();
    expect(await verifyPassword('Secret 2', row.password_hash)).toBe(true);
  });

  it('is all-or-nothing and gives the vendor texts', async () => {
    await importUser(t.db, admin, body('{Email:"aon@corp.com",firstName:"Same"}'));
    const id = await idOf('aon@corp.com');
    await expect(modifyUser(t.db, admin, id, body('{UserName:"333339332323",firstName:"Changed"}'))).rejects.toThrow(INVALID_USERNAME);
    await expect(modifyUser(t.db, admin, id, body('{UserName:"Upd2@corp.com",firstName:"Changed"}'))).resolves.toBeUndefined();
    await expect(modifyUser(t.db, admin, id, body('{UserName:"c@CORP.com",firstName:"Again"}')))
      .rejects.toThrow(/^ERROR: 23505: duplicate key value violates unique constraint "users_login_key"$/);
    await expect(modifyUser(t.db, admin, id, body('{firstName:"Again",roles:["Nope"]}'))).rejects.toThrow("Role 'Nope' not found.");
    await expect(modifyUser(t.db, admin, id, body('{UserName:"admin"}'))).rejects.toThrow(INVALID_USERNAME);
    const [u] = await listUsers(t.db, admin, { id });
    expect(u).toMatchObject({ email: 'Upd2@corp.com', firstName: 'Changed', roles: ['Tester'] });
    await expect(modifyUser(t.db, admin, '00000000-0000-4000-8000-000000000001', body('{}')))
      .rejects.toThrow("User '00000000-0000-4000-8000-000000000001' not found.");
  });

  it('checks UserModify, UserModifySelf and UserRolesModify before anything else', async () => {
    const self = await userWith('selfish@corp.com', ['UserModifySelf']);
    const other = await idOf('c@corp.com');
    await expect(modifyUser(t.db, self, other, body('{firstName:"x"}'))).rejects.toThrow('User does not have required entitlement: UserModify');
    await expect(modifyUser(t.db, self, '00000000-0000-4000-8000-000000000009', body('{bad json')))
      .rejects.toThrow('User does not have required entitlement: UserModify');
    await modifyUser(t.db, self, self.id, body('{firstName:"Me"}'));
    await expect(modifyUser(t.db, self, self.id, body('{roles:["Administrator"]}')))
      .rejects.toThrow('User does not have required entitlement: UserRolesModify');
    const none = await userWith('none@corp.com', []);
    await expect(modifyUser(t.db, none, none.id, body('{firstName:"x"}'))).rejects.toThrow('User does not have required entitlement: UserModifySelf');
    expect((await listUsers(t.db, admin, { id: self.id }))[0]).toMatchObject({ firstName: 'Me', roles: ['role-of-selfish@corp.com'] });
  });

  it('keeps the built-in admin name and at least one active Administrator', async () => {
    await expect(modifyUser(t.db, admin, admin.id, body('{UserName:"root@corp.com"}'))).rejects.toThrow(ADMIN_CANNOT_BE_RENAMED);
    await modifyUser(t.db, admin, admin.id, body('{UserName:"admin",firstName:"Ad"}'));
    // Other administrators exist (boss, APIUPDATEUSER is inactive): take them away, then the last one is refused.
    const boss = await idOf('boss@corp.com');
    await modifyUser(t.db, admin, boss, body('{roles:["Tester"]}'));
    await expect(modifyUser(t.db, admin, admin.id, body('{roles:["Tester"]}'))).rejects.toThrow(LAST_ADMINISTRATOR);
    await expect(modifyUser(t.db, admin, admin.id, body('{isActive:false}'))).rejects.toThrow(LAST_ADMINISTRATOR);
    expect((await listUsers(t.db, admin, { id: admin.id }))[0]).toMatchObject({ email: 'admin', isActive: true, roles: ['Administrator'] });
  });
});

describe('API tokens (action=generateToken) and logins', () => {
  it('replaces the token: the old one stops working; own with UserModifySelf, others need UserModify', async () => {
    const self = await userWith('tok@corp.com', ['UserModifySelf']);
    const first = await generateUserToken(t.db, admin, self.id);
    expect(await findUserByCredentials(t.db, 'tok@corp.com', first)).toMatchObject({ id: self.id });
    const second = await generateUserToken(t.db, self, self.id);
    expect(await findUserByCredentials(t.db, 'tok@corp.com', first)).toBeUndefined();
    expect(await findUserByCredentials(t.db, 'TOK@corp.com', second)).toMatchObject({ id: self.id });
    await expect(generateUserToken(t.db, self, admin.id)).rejects.toThrow('User does not have required entitlement: UserModify');
    const row = await t.db.selectFrom('users').select('token_sha256').where('id', '=', self.id).executeTakeFirstOrThrow();
    expect(row.token_sha256?.toString('utf8')).not.toContain(second);
  });

  it('an imported user has no token until one is generated; an inactive user cannot authenticate', async () => {
    await importUser(t.db, admin, body('{Email:"late@corp.com",isActive:false}'));
    const id = await idOf('late@corp.com');
    const token = await generateUserToken(t.db, admin, id);
    expect(await findUserByCredentials(t.db, 'late@corp.com', token)).toBeUndefined();
    await modifyUser(t.db, admin, id, body('{isActive:true}'));
    expect(await findUserByCredentials(t.db, 'late@corp.com', token)).toBeDefined();
  });

  it('the first authentication after 30 idle minutes is a login: lastLoginDate and one User Login event', async () => {
    const self = await userWith('login@corp.com', ['UserModifySelf']);
    const token = await generateUserToken(t.db, admin, self.id);
    const logins = () => t.db.selectFrom('events').selectAll().where('user_id', '=', self.id).where('event_type', '=', 'UserLogin').execute();
    await Promise.all([1, 2, 3].map(() => findUserByCredentials(t.db, 'login@corp.com', token)));
    expect(await logins()).toEqual([expect.objectContaining({ message: 'User Login', performed_by_id: self.id })]);
    const [u] = await listUsers(t.db, admin, { id: self.id });
    expect(u.lastLoginDate).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    // 10 idle minutes: same session. 31 idle minutes: a new login.
    await t.db.updateTable('users').set({ last_seen_at: new Date(Date.now() - 10 * 60_000) }).where('id', '=', self.id).execute();
    await findUserByCredentials(t.db, 'login@corp.com', token);
    expect(await logins()).toHaveLength(1);
    await t.db.updateTable('users').set({ last_seen_at: new Date(Date.now() - 31 * 60_000) }).where('id', '=', self.id).execute();
    await findUserByCredentials(t.db, 'login@corp.com', token);
    expect(await logins()).toHaveLength(2);
    await findUserByCredentials(t.db, 'login@corp.com', 'wrong');
    expect(await logins()).toHaveLength(2);
  });
});
