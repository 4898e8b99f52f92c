import { ADMINISTRATOR_ROLE, builtInRoles, TESTER_ROLE } from '@devicelab/shared';
import { API_TOKEN_PATTERN, generateApiToken, hashToken, tokenMatchesHash } from '../../src/auth/api-tokens';
import {
  ADMIN_LOGIN,
  createUser,
  DuplicateLoginError,
  ensureBuiltInRolesAndAdmin,
  findUserByCredentials,
  InvalidApiTokenError,
  rotateUserToken,
  UnknownRoleError,
  UserNotFoundError,
} from '../../src/auth/users';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.drop());

describe('API tokens', () => {
  it('are GUID-shaped, random, and hashed with SHA-256', () => {
    const tokens = new Set(Array.from({ length: 100 }, generateApiToken));
    expect(tokens.size).toBe(100);
    for (const token of tokens) expect(token).toMatch(API_TOKEN_PATTERN);
    const token = generateApiToken();
    expect(hashToken(token)).toHaveLength(32);
    expect(tokenMatchesHash(token, hashToken(token))).toBe(true);
    expect(tokenMatchesHash(generateApiToken(), hashToken(token))).toBe(false);
    expect(tokenMatchesHash(token, null)).toBe(false);
    expect(tokenMatchesHash(token, Buffer.alloc(3))).toBe(false);
  });
});

describe('built-in roles and admin', () => {
  let adminToken: string;

  it('creates both roles and the admin with a generated token on first start, once', async () => {
    const first = await ensureBuiltInRolesAndAdmin(t.db);
    expect(first).toMatchObject({ adminCreated: true, adminTokenGenerated: true });
    expect(first.adminToken).toMatch(API_TOKEN_PATTERN);
    adminToken = first.adminToken!;

    const again = await ensureBuiltInRolesAndAdmin(t.db);
    expect(again).toEqual({ adminCreated: false, adminToken: undefined, adminTokenGenerated: false });

    const roles = await t.db.selectFrom('roles').selectAll().orderBy('name').execute();
    expect(roles.map((r) => r.name)).toEqual([ADMINISTRATOR_ROLE, TESTER_ROLE]);
    expect(roles.every((r) => r.built_in)).toBe(true);
    expect(roles[1].entitlements).toEqual([...builtInRoles[TESTER_ROLE]]);

    const admin = await findUserByCredentials(t.db, ADMIN_LOGIN, adminToken);
    expect(admin?.roles).toEqual([ADMINISTRATOR_ROLE]);
    expect([...admin!.entitlements].sort()).toEqual([...builtInRoles[ADMINISTRATOR_ROLE]].sort());
  });

  it('applies DEVICELAB_ADMIN_TOKEN on every start and keeps it when the variable is unset', async () => {
    const fromEnv = generateApiToken();
    await expect(ensureBuiltInRolesAndAdmin(t.db, { adminToken: fromEnv })).resolves.toEqual({
      adminCreated: false,
      adminToken: fromEnv,
      adminTokenGenerated: false,
    });
    expect(await findUserByCredentials(t.db, ADMIN_LOGIN, adminToken)).toBeUndefined();
    expect(await findUserByCredentials(t.db, 'ADMIN', fromEnv)).toBeDefined();
    await ensureBuiltInRolesAndAdmin(t.db);
    expect(await findUserByCredentials(t.db, ADMIN_LOGIN, fromEnv)).toBeDefined();
  });

  it('rejects an admin token that clients would refuse', async () => {
    await expect(ensureBuiltInRolesAndAdmin(t.db, { adminToken: 'secret' })).rejects.toBeInstanceOf(InvalidApiTokenError);
  });
});

describe('users', () => {
  it('stores only the token hash, authenticates case-insensitively by login, and records the login time', async () => {
    const { user, token } = await createUser(t.db, { login: 'Tess@example.com', firstName: 'Tess', lastName: 'Ter', roles: ['tester'] });
    const row = await t.db.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow();
    expect(row.token_sha256).toEqual(hashToken(token));
    expect(JSON.stringify(row)).not.toContain(token);
    expect(row.last_login_at).toBeNull();

    const found = await findUserByCredentials(t.db, 'tess@EXAMPLE.com', token);
    expect(found).toMatchObject({ id: user.id, login: 'Tess@example.com', displayName: 'Tess Ter', roles: [TESTER_ROLE] });
    expect(found!.entitlements.has('DeviceList')).toBe(true);
    expect(found!.entitlements.has('UserModify')).toBe(false);
    const after = await t.db.selectFrom('users').select('last_login_at').where('id', '=', user.id).executeTakeFirstOrThrow();
    expect(after.last_login_at).toBeInstanceOf(Date);
  });

  it('fails a wrong token, an unknown login and an inactive user', async () => {
    const { token } = await createUser(t.db, { login: 'gone@example.com', roles: [TESTER_ROLE], isActive: false });
    expect(await findUserByCredentials(t.db, 'gone@example.com', token)).toBeUndefined();
    const active = await createUser(t.db, { login: 'here@example.com', roles: [] });
    expect(await findUserByCredentials(t.db, 'here@example.com', generateApiToken())).toBeUndefined();
    expect(await findUserByCredentials(t.db, 'nobody@example.com', active.token)).toBeUndefined();
    expect(await findUserByCredentials(t.db, 'here@example.com', active.token)).toMatchObject({ roles: [] });
  });

  it('rotates a token: the old one stops working', async () => {
    const { token: old } = await createUser(t.db, { login: 'rot@example.com', roles: [TESTER_ROLE] });
    const fresh = await rotateUserToken(t.db, 'ROT@example.com');
    expect(fresh).not.toBe(old);
    expect(await findUserByCredentials(t.db, 'rot@example.com', old)).toBeUndefined();
    expect(await findUserByCredentials(t.db, 'rot@example.com', fresh)).toBeDefined();
    await expect(rotateUserToken(t.db, 'missing@example.com')).rejects.toBeInstanceOf(UserNotFoundError);
  });

  it('refuses duplicate logins and unknown roles without leaving a half-made user', async () => {
    await expect(createUser(t.db, { login: 'TESS@example.com', roles: [] })).rejects.toBeInstanceOf(DuplicateLoginError);
    await expect(createUser(t.db, { login: 'x@example.com', roles: ['Astronaut'] })).rejects.toBeInstanceOf(UnknownRoleError);
    expect(await t.db.selectFrom('users').select('id').where('login', '=', 'x@example.com').executeTakeFirst()).toBeUndefined();
  });
});
