/**
 * Changing users: `POST /User?update` (UserModify / UserModifySelf), `?add` (UserImport) and the extension
 * `?action=generateToken`. Entitlements are checked first, then the whole body, then the stored rows; every
 * change is one transaction, so a failure changes nothing. Nobody changes a user, or obtains its token, holding
 * entitlements the caller does not hold, nor assigns a role granting such entitlements (`./privilege`).
 */
import { sql, type Updateable } from 'kysely';
import { ADMINISTRATOR_ROLE, ApiFailure, TESTER_ROLE, type UserProperty } from '@devicelab/shared';
import { generateApiToken } from '../auth/api-tokens';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { hashPassword } from '../auth/passwords';
import { hasEntitlement, missingEntitlement, requireEntitlement } from '../auth/entitlements';
import { endWebSessions, grantedEntitlements, losesEntitlements } from '../auth/session-revocation';
import { setUserToken } from '../auth/users';
import { isUniqueViolation, violatedConstraint, withTx, type Db, type Tx } from '../store/database';
import type { UserRow, UsersTable } from '../store/schema';
import type { ChangeRequest } from './deferred-input';
import { recordEvent } from './events';
import { requireDistinctName } from './name-rules';
import { requireRoleWithinReach, requireUserWithinReach } from './privilege';
import { roleNotFound } from './roles';
import { BUILT_IN_ADMIN_LOGIN, INVALID_USERNAME, userNotFound, type UserChange } from './users';

export const LAST_ADMINISTRATOR =
  'The last active Administrator cannot lose the Administrator role or be deactivated.';
export const ADMIN_CANNOT_BE_RENAMED = `The built-in user '${BUILT_IN_ADMIN_LOGIN}' cannot be renamed.`;
export const NO_LOGIN_GIVEN = 'A new user needs an Email (or UserName) in a JSON body.';

/**
 * User update: UserModify for anyone, UserModify or UserModifySelf for oneself. Changing `roles` also needs
 * UserRolesModify (an extension decision: roles grant entitlements, so editing them is role administration).
 */
export async function modifyUser(
  db: Db, caller: AuthenticatedUser, id: string, request: ChangeRequest<UserChange>,
): Promise<void> {
  requireModifyRight(caller, id);
  if (request.properties().includes('roles')) requireEntitlement(caller, 'UserRolesModify');
  const change = request.read();
  const passwordHash = change.password !== undefined ? await hashPassword(change.password) : undefined;

  await translateDuplicates(() => withTx(db, async (trx) => {
    const guardsAdministrators = change.roles !== undefined || change.isActive === false;
    if (guardsAdministrators) await lockAdministratorRole(trx);
    const row = await trx.selectFrom('users').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    if (!row) throw new ApiFailure(userNotFound(id));
    await requireUserWithinReach(trx, caller, row);
    checkLoginChange(row, change.login);
    if (change.login !== undefined && change.login !== row.login) await requireDistinctName(trx, 'login', change.login, id);

    const columns: Updateable<UsersTable> = {};
    if (change.login !== undefined && change.login !== row.login) columns.login = change.login;
    if (passwordHash !== undefined) columns.password_hash = passwordHash;
    if (change.isActive !== undefined) columns.is_active = change.isActive;
    if (change.names.firstName !== undefined) columns.first_name = change.names.firstName;
    if (change.names.middleName !== undefined) columns.middle_name = change.names.middleName;
    if (change.names.lastName !== undefined) columns.last_name = change.names.lastName;
    if (Object.keys(change.profile).length > 0) columns.profile = JSON.stringify(mergeProfile(row.profile, change.profile));
    if (Object.keys(columns).length > 0) await trx.updateTable('users').set(columns).where('id', '=', id).execute();

    const entitlementsBefore = change.roles !== undefined ? await grantedEntitlements(trx, id) : undefined;
    if (change.roles !== undefined) await replaceRoles(trx, caller, id, change.roles);
    if (change.properties !== undefined) await replaceProperties(trx, id, change.properties);
    if (guardsAdministrators) await requireAnActiveAdministrator(trx);
    const losesRights = entitlementsBefore !== undefined && losesEntitlements(entitlementsBefore, await grantedEntitlements(trx, id));
    if (change.isActive === false || losesRights) await endWebSessions(trx, [id]);
  }));
}

/**
 * User import (`POST /User?add`): `Email` or `UserName`, optional Password, isActive (default true), profile
 * fields, properties and roles (default `["Tester"]`; any other role set needs UserRolesModify too). The new
 * user has no API token until one is generated; a UserCreated event is written in the same transaction.
 */
export async function importUser(db: Db, caller: AuthenticatedUser, request: ChangeRequest<UserChange>): Promise<string> {
  requireEntitlement(caller, 'UserImport');
  const change = request.read();
  if (change.login === undefined || change.login === '') throw new ApiFailure(NO_LOGIN_GIVEN);
  if (change.login.toLowerCase() === BUILT_IN_ADMIN_LOGIN) throw new ApiFailure(INVALID_USERNAME);
  const roles = change.roles ?? [TESTER_ROLE];
  const onlyTester = roles.length === 1 && roles[0].toLowerCase() === TESTER_ROLE.toLowerCase();
  if (!onlyTester) requireEntitlement(caller, 'UserRolesModify');
  const passwordHash = change.password !== undefined ? await hashPassword(change.password) : null;

  return translateDuplicates(() => withTx(db, async (trx) => {
    await requireDistinctName(trx, 'login', change.login!);
    const row = await trx.insertInto('users').values({
      login: change.login!,
      first_name: change.names.firstName ?? null,
      middle_name: change.names.middleName ?? null,
      last_name: change.names.lastName ?? null,
      is_active: change.isActive ?? true,
      profile: JSON.stringify(mergeProfile({}, change.profile)),
      password_hash: passwordHash,
      token_sha256: null,
    }).returning('id').executeTakeFirstOrThrow();
    await replaceRoles(trx, caller, row.id, roles);
    if (change.properties) await replaceProperties(trx, row.id, change.properties);
    await recordEvent(trx, {
      eventType: 'UserCreated', message: 'User Created', userId: row.id, stringValue: change.login!,
      performedById: caller.id, performedByName: caller.displayName,
    });
    return row.id;
  }));
}

/** Extension: a new API token for a user (own with UserModifySelf, anyone's with UserModify); the old one stops working. */
export async function generateUserToken(db: Db, caller: AuthenticatedUser, id: string): Promise<string> {
  requireModifyRight(caller, id);
  const token = generateApiToken();
  await withTx(db, async (trx) => {
    const row = await trx.selectFrom('users').select(['id', 'login']).where('id', '=', id).forUpdate().executeTakeFirst();
    if (!row) throw new ApiFailure(userNotFound(id));
    await requireUserWithinReach(trx, caller, row);
    await setUserToken(trx, id, token);
  });
  return token;
}

/** UserModify for anyone, UserModify or UserModifySelf for oneself. */
export function requireModifyRight(caller: AuthenticatedUser, id: string): void {
  if (hasEntitlement(caller, 'UserModify')) return;
  if (id === caller.id) {
    if (!hasEntitlement(caller, 'UserModifySelf')) throw missingEntitlement('UserModifySelf');
    return;
  }
  throw missingEntitlement('UserModify');
}

/** The built-in admin keeps its name (the hub finds it by that name on every start); nobody else may take it. */
function checkLoginChange(row: UserRow, login: string | undefined): void {
  if (login === undefined) return;
  const isAdminRow = row.login.toLowerCase() === BUILT_IN_ADMIN_LOGIN;
  const wantsAdmin = login.toLowerCase() === BUILT_IN_ADMIN_LOGIN;
  if (isAdminRow && !wantsAdmin) throw new ApiFailure(ADMIN_CANNOT_BE_RENAMED);
  if (!isAdminRow && wantsAdmin) throw new ApiFailure(INVALID_USERNAME);
}

function mergeProfile(
  current: Record<string, string> | null | undefined, change: Record<string, string | null | undefined>,
): Record<string, string> {
  const merged: Record<string, string> = { ...(current ?? {}) };
  for (const [field, value] of Object.entries(change)) {
    if (value === null || value === undefined) delete merged[field];
    else merged[field] = value;
  }
  return merged;
}

/** Gives the user exactly these roles; each must exist and grant only entitlements the caller holds. */
async function replaceRoles(trx: Tx, caller: AuthenticatedUser, userId: string, names: string[]): Promise<void> {
  const lowered = [...new Set(names.map((n) => n.toLowerCase()))];
  const roles = lowered.length === 0 ? [] : await trx.selectFrom('roles').select(['id', 'name', 'entitlements'])
    .where(sql<boolean>`lower(name) = ANY(${lowered}::text[])`).forShare().execute();
  const found = new Set(roles.map((r) => r.name.toLowerCase()));
  const missing = names.find((n) => !found.has(n.toLowerCase()));
  if (missing !== undefined) throw new ApiFailure(roleNotFound(missing));
  for (const role of roles) requireRoleWithinReach(caller, role);
  await trx.deleteFrom('user_roles').where('user_id', '=', userId).execute();
  if (roles.length > 0) {
    await trx.insertInto('user_roles').values(roles.map((r) => ({ user_id: userId, role_id: r.id }))).execute();
  }
}

async function replaceProperties(trx: Tx, userId: string, properties: UserProperty[]): Promise<void> {
  await trx.deleteFrom('user_properties').where('user_id', '=', userId).execute();
  if (properties.length === 0) return;
  await trx.insertInto('user_properties')
    .values(properties.map((p, position) => ({ user_id: userId, name: p.name, value: p.value, position })))
    .execute();
}

/** Serialises every change that could remove an Administrator, so two of them cannot both pass the check. */
async function lockAdministratorRole(trx: Tx): Promise<void> {
  await trx.selectFrom('roles').select('id').where(sql<boolean>`lower(name) = lower(${ADMINISTRATOR_ROLE})`)
    .forUpdate().execute();
}

async function requireAnActiveAdministrator(trx: Tx): Promise<void> {
  const { count } = await trx.selectFrom('users')
    .innerJoin('user_roles', 'user_roles.user_id', 'users.id')
    .innerJoin('roles', 'roles.id', 'user_roles.role_id')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('users.is_active', '=', true)
    .where(sql<boolean>`lower(roles.name) = lower(${ADMINISTRATOR_ROLE})`)
    .executeTakeFirstOrThrow();
  if (Number(count) === 0) throw new ApiFailure(LAST_ADMINISTRATOR);
}

/**
 * A login taken by someone else (case-insensitively): the vendor server passed PostgreSQL's text through, and clients
 * test its `ERROR: 23505:` prefix (wire rule 29, docs/wire-rules.md). Built from SQLSTATE and constraint, never from
 * the server's (localised) message.
 */
const duplicateLoginMessage = (constraint: string): string =>
  `ERROR: 23505: duplicate key value violates unique constraint "${constraint}"`;

async function translateDuplicates<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isUniqueViolation(err) && violatedConstraint(err) === 'users_login_key') {
      throw new ApiFailure(duplicateLoginMessage('users_login_key'));
    }
    throw err;
  }
}
