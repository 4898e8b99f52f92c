import { Entitlement } from '@devicelab/shared';
import type { AuthenticatedUser } from '../../src/auth/authenticated-user';
import { createUser, ensureBuiltInRolesAndAdmin, loadAuthenticatedUser } from '../../src/auth/users';
import { addRole, deleteRole, listRoles, updateRole } from '../../src/domain/roles';
import { roleChanges } from '../../src/api/role-body';
import { JsonBody } from '../../src/http/json-body';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let t: TestDatabase;
let admin: AuthenticatedUser;
beforeAll(async () => {
  t = await createTestDatabase();
  await ensureBuiltInRolesAndAdmin(t.db);
  admin = await loadAuthenticatedUser(t.db, await t.db.selectFrom('users').selectAll().where('login', '=', 'admin').executeTakeFirstOrThrow());
});
afterAll(() => t.drop());

const body = (text: string) => roleChanges(() => JsonBody.parse(text));
const roleNamed = async (name: string) => (await listRoles(t.db, admin)).find((r) => r.name === name);

describe('roles (extension /Role)', () => {
  it('lists built-in roles with their entitlements', async () => {
    const roles = await listRoles(t.db, admin);
    expect(roles.find((r) => r.name === 'Administrator')).toMatchObject({ isBuiltIn: true, entitlements: [...Entitlement] });
    expect(roles.find((r) => r.name === 'Tester')).toMatchObject({ isBuiltIn: true });
  });

  it('adds, renames, re-entitles and deletes a role; entitlement names are case-insensitive', async () => {
    await addRole(t.db, admin, body('{name:"QA",entitlements:["devicelist","DeviceConnect","DeviceList"]}'));
    expect(await roleNamed('QA')).toMatchObject({ isBuiltIn: false, entitlements: ['DeviceConnect', 'DeviceList'] });
    await updateRole(t.db, admin, { name: 'qa' }, body('{name:"QA Leads",entitlements:["UserList"]}'));
    expect(await roleNamed('QA')).toBeUndefined();
    const leads = await roleNamed('QA Leads');
    expect(leads).toMatchObject({ entitlements: ['UserList'] });
    await deleteRole(t.db, admin, { id: leads!.id });
    expect(await roleNamed('QA Leads')).toBeUndefined();
  });

  it('a role change takes effect on the holder at the next authentication', async () => {
    await addRole(t.db, admin, body('{name:"Viewers",entitlements:["DeviceList"]}'));
    const { user } = await createUser(t.db, { login: 'viewer@corp.com', roles: ['Viewers'] });
    expect([...(await loadAuthenticatedUser(t.db, user)).entitlements]).toEqual(['DeviceList']);
    await updateRole(t.db, admin, { name: 'Viewers' }, body('{entitlements:["DeviceList","DeviceReboot"]}'));
    expect([...(await loadAuthenticatedUser(t.db, user)).entitlements].sort()).toEqual(['DeviceList', 'DeviceReboot']);
  });

  it('refuses bad changes with clear texts and changes nothing', async () => {
    const before = await listRoles(t.db, admin);
    await expect(addRole(t.db, admin, body('{name:"X",entitlements:["FlyToTheMoon"]}'))).rejects.toThrow(/^Unknown entitlement 'FlyToTheMoon'\. Known entitlements: ApplicationList, /);
    await expect(addRole(t.db, admin, body('{name:"tester"}'))).rejects.toThrow("A role named 'tester' already exists.");
    await expect(addRole(t.db, admin, body('{entitlements:[]}'))).rejects.toThrow('A role needs a name.');
    await expect(addRole(t.db, admin, body('{name:"  "}'))).rejects.toThrow('A role name must not be empty.');
    await expect(addRole(t.db, admin, body('{name:"Y",color:"red"}'))).rejects.toThrow(/Property 'color' is not part of a role/);
    await expect(updateRole(t.db, admin, { name: 'Administrator' }, body('{name:"Boss"}'))).rejects.toThrow("The built-in role 'Administrator' cannot be renamed.");
    await expect(updateRole(t.db, admin, { name: 'Tester' }, body('{name:"Testers"}'))).rejects.toThrow("The built-in role 'Tester' cannot be renamed.");
    await expect(updateRole(t.db, admin, { name: 'Administrator' }, body('{entitlements:["DeviceList"]}'))).rejects.toThrow(/^The built-in role 'Administrator' cannot be given other entitlements/);
    await expect(deleteRole(t.db, admin, { name: 'Administrator' })).rejects.toThrow("The built-in role 'Administrator' cannot be deleted.");
    await expect(deleteRole(t.db, admin, { name: 'Viewers' })).rejects.toThrow("Role 'Viewers' is assigned to 1 user(s); remove it from them before deleting it.");
    await expect(updateRole(t.db, admin, { name: 'Viewers' }, body('{name:"Tester"}'))).rejects.toThrow("A role named 'Tester' already exists.");
    await expect(deleteRole(t.db, admin, { name: 'Ghosts' })).rejects.toThrow("Role 'Ghosts' not found.");
    expect(await listRoles(t.db, admin)).toEqual(before);
    // Administrator keeps every entitlement: sending the full list is accepted as no change; Tester is editable.
    await updateRole(t.db, admin, { name: 'Administrator' }, body(JSON.stringify({ name: 'Administrator', entitlements: Entitlement })));
    await updateRole(t.db, admin, { name: 'Tester' }, body('{entitlements:["DeviceList"]}'));
    expect(await roleNamed('Tester')).toMatchObject({ entitlements: ['DeviceList'] });
  });

  it('needs UserRolesModify to change roles; without it only the caller\'s own roles are listed', async () => {
    const { user } = await createUser(t.db, { login: 'plain@corp.com', roles: ['Viewers'] });
    const plain = await loadAuthenticatedUser(t.db, user);
    expect((await listRoles(t.db, plain)).map((r) => r.name)).toEqual(['Viewers']);
    const denied = 'User does not have required entitlement: UserRolesModify';
    await expect(addRole(t.db, plain, body('{name:"Mine"}'))).rejects.toThrow(denied);
    await expect(updateRole(t.db, plain, { name: 'nonexistent' }, body('{}'))).rejects.toThrow(denied);
    await expect(deleteRole(t.db, plain, { name: 'Viewers' })).rejects.toThrow(denied);
  });
});
