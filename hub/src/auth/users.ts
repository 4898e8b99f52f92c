/**
 * Users, roles and API tokens over the records store: the built-in accounts made on first start, user
 * creation, token rotation, and the credential check behind Basic auth.
 */
import { sql } from 'kysely';
import { ADMINISTRATOR_ROLE, builtInRoles, Entitlement, type Entitlement as EntitlementName } from '@devicelab/shared';
import { isUniqueViolation, violatedConstraint, withTx, type Db, type Tx } from '../store/database';
import type { UserRow } from '../store/schema';
import { generateApiToken, hashToken, isWellFormedApiToken, tokenMatchesHash } from './api-tokens';
import { displayNameOf, type AuthenticatedUser } from './authenticated-user';
import { noteAuthentication } from './login-tracking';
import { readUsers, type CheckedUserRow, type CredentialReads, type RoleGrant } from './credential-reads';
import { endWebSessions } from './session-revocation';
import type { CredentialCache } from './credential-cache';
import type { ListStamps } from '../domain/device-list-cache';

export const ADMIN_LOGIN = 'admin';

export class UserNotFoundError extends Error {
  constructor(readonly login: string) {
    super(`No user with login '${login}'.`);
    this.name = 'UserNotFoundError';
  }
}

export class DuplicateLoginError extends Error {
  constructor(readonly login: string) {
    super(`A user with login '${login}' already exists.`);
    this.name = 'DuplicateLoginError';
  }
}

export class UnknownRoleError extends Error {
  constructor(readonly roleNames: string[]) {
    super(`Unknown role(s): ${roleNames.join(', ')}.`);
    this.name = 'UnknownRoleError';
  }
}

export class InvalidApiTokenError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'InvalidApiTokenError';
  }
}

interface EnsureBuiltInsOptions {
  /** DEVICELAB_ADMIN_TOKEN: when given, the admin's token is set to it on every start (idempotent). */
  adminToken?: string;
}

interface EnsureBuiltInsResult {
  /** true when the admin user was created by this call. */
  adminCreated: boolean;
  /**
   * The admin's token when this call created or set it (generated on creation, or DEVICELAB_ADMIN_TOKEN):
   * print it once; only its hash is stored. Undefined when the stored token was left as it was.
   */
  adminToken?: string;
  /** true when `adminToken` was generated here (nobody knows it yet). */
  adminTokenGenerated: boolean;
}

/**
 * First-start setup, safe to run on every start and from two hubs at once:
 *  - roles Administrator and Tester exist; Administrator's entitlements are re-synced to the full list on
 *    every start (it holds everything by definition, including entitlements added by upgrades); Tester is
 *    created with its defaults and then left alone, so an operator's edits survive restarts;
 *  - user `admin` exists with role Administrator. Its token: `adminToken` when given, applied on every start
 *    so changing DEVICELAB_ADMIN_TOKEN and restarting changes the token (and unsetting it keeps the last one);
 *    otherwise generated once on creation and returned for the caller to print.
 */
export async function ensureBuiltInRolesAndAdmin(
  db: Db,
  options: EnsureBuiltInsOptions = {},
): Promise<EnsureBuiltInsResult> {
  const { adminToken } = options;
  if (adminToken !== undefined && !isWellFormedApiToken(adminToken)) {
    throw new InvalidApiTokenError(
      'DEVICELAB_ADMIN_TOKEN must be a lower-case GUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx); clients reject other shapes.',
    );
  }
  try {
    return await withTx(db, (trx) => ensureBuiltIns(trx, adminToken));
  } catch (err) {
    // Another hub created the same rows between our check and insert: its rows are as good as ours.
    if (isUniqueViolation(err) && violatedConstraint(err) !== 'users_token_key') {
      return withTx(db, (trx) => ensureBuiltIns(trx, adminToken));
    }
    if (isUniqueViolation(err)) throw new InvalidApiTokenError('DEVICELAB_ADMIN_TOKEN is already the token of another user.');
    throw err;
  }
}

async function ensureBuiltIns(trx: Tx, adminToken: string | undefined): Promise<EnsureBuiltInsResult> {
  for (const [name, entitlements] of Object.entries(builtInRoles)) {
    await trx
      .insertInto('roles')
      .values({ name, entitlements: [...entitlements], built_in: true })
      .onConflict((oc) => oc.expression(sql`lower(name)`).doNothing())
      .execute();
  }
  await trx
    .updateTable('roles')
    .set({ entitlements: [...builtInRoles[ADMINISTRATOR_ROLE]], built_in: true })
    .where(sql<boolean>`lower(name) = lower(${ADMINISTRATOR_ROLE})`)
    .execute();

  const existing = await findUserRow(trx, ADMIN_LOGIN);
  if (existing) {
    if (adminToken !== undefined && !tokenMatchesHash(adminToken, existing.token_sha256)) {
      await setUserToken(trx, existing.id, adminToken);
    }
    await assignRoles(trx, existing.id, [ADMINISTRATOR_ROLE]);
    return { adminCreated: false, adminToken, adminTokenGenerated: false };
  }
  const token = adminToken ?? generateApiToken();
  const { id } = await trx
    .insertInto('users')
    .values({ login: ADMIN_LOGIN, first_name: null, middle_name: null, last_name: null, token_sha256: hashToken(token) })
    .returning('id')
    .executeTakeFirstOrThrow();
  await assignRoles(trx, id, [ADMINISTRATOR_ROLE]);
  return { adminCreated: true, adminToken: token, adminTokenGenerated: adminToken === undefined };
}

interface NewUser {
  login: string;
  firstName?: string | null;
  middleName?: string | null;
  lastName?: string | null;
  /** Role names (case-insensitive); every one must exist. */
  roles: string[];
  isActive?: boolean;
  profile?: Record<string, string>;
}

/** Creates a user with a fresh API token; returns the row and the token (shown once, never stored). */
export async function createUser(db: Db, user: NewUser): Promise<{ user: UserRow; token: string }> {
  const token = generateApiToken();
  try {
    return await withTx(db, async (trx) => {
      const row = await trx
        .insertInto('users')
        .values({
          login: user.login,
          first_name: user.firstName ?? null,
          middle_name: user.middleName ?? null,
          last_name: user.lastName ?? null,
          is_active: user.isActive ?? true,
          profile: JSON.stringify(user.profile ?? {}),
          token_sha256: hashToken(token),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await assignRoles(trx, row.id, user.roles);
      return { user: row, token };
    });
  } catch (err) {
    if (isUniqueViolation(err) && violatedConstraint(err) === 'users_login_key') throw new DuplicateLoginError(user.login);
    throw err;
  }
}

/** Replaces a user's token with a new one and returns it; the old token stops working at once. */
export async function rotateUserToken(db: Db, login: string): Promise<string> {
  const token = generateApiToken();
  await withTx(db, async (trx) => {
    const row = await findUserRow(trx, login);
    if (!row) throw new UserNotFoundError(login);
    await setUserToken(trx, row.id, token);
  });
  return token;
}

/** Every change of a user's API token: the old token, and the dashboard sessions signed in with it, end at once. */
export async function setUserToken(trx: Tx, userId: string, token: string): Promise<void> {
  await trx.updateTable('users').set({ token_sha256: hashToken(token) }).where('id', '=', userId).execute();
  await endWebSessions(trx, [userId]);
}

/** What a credential check found; the reason of a failure is for the log only, never for the client. */
type CredentialCheck =
  | { user: AuthenticatedUser; listStamps?: ListStamps }
  | { failure: 'unknown login' | 'inactive user' | 'wrong token' };

/** Where a check reads the user: batched with other requests' checks, and whether it wants the list stamps too. */
interface CheckRead {
  reads: CredentialReads;
  withListStamps: boolean;
  /** Verifications kept between writes to the user tables; a kept one is used without reading the records. */
  cache?: CredentialCache;
}

/**
 * The Basic-auth check: the user with this login (case-insensitive), active, whose token hash matches in
 * constant time. A successful check after a pause counts as a login (auth/login-tracking.ts).
 */
export async function checkCredentials(db: Db, login: string, token: string, via?: CheckRead): Promise<CredentialCheck> {
  const kept = via?.cache?.find(login, token);
  if (kept) {
    await noteAuthentication(db, kept.row);
    return { user: kept.user };
  }
  // Taken before the read: a write heard while it runs leaves what it read unused.
  const stamp = via?.cache?.stamp();
  // One round trip: the user row with its roles (every request authenticates, so this is the hot path).
  const read = via ? await via.reads.read(login, via.withListStamps) : { user: (await readUsers(db, [login], false)).users.get(login) };
  if (!read.user) return { failure: 'unknown login' };
  const { granted_roles: roles, ...row } = read.user;
  if (!tokenMatchesHash(token, row.token_sha256)) return { failure: 'wrong token' };
  if (!row.is_active) return { failure: 'inactive user' };
  await noteAuthentication(db, row);
  const user = authenticatedUser(row, roles);
  via?.cache?.remember(login, token, stamp, { user, row });
  return { user, listStamps: read.listStamps };
}

/** The user these credentials authenticate, or undefined, without saying which part was wrong. */
export async function findUserByCredentials(db: Db, login: string, token: string): Promise<AuthenticatedUser | undefined> {
  const check = await checkCredentials(db, login, token);
  return 'user' in check ? check.user : undefined;
}

/** The AuthenticatedUser of a user row: its roles and the union of their entitlements. */
export async function loadAuthenticatedUser(db: Db | Tx, row: UserRow): Promise<AuthenticatedUser> {
  const roles = await db
    .selectFrom('user_roles')
    .innerJoin('roles', 'roles.id', 'user_roles.role_id')
    .select(['roles.name', 'roles.entitlements'])
    .where('user_roles.user_id', '=', row.id)
    .orderBy('roles.name')
    .execute();
  return authenticatedUser(row, roles);
}

function authenticatedUser(row: CheckedUserRow, roles: RoleGrant[]): AuthenticatedUser {
  const known = new Set<string>(Entitlement);
  const entitlements = new Set<EntitlementName>();
  for (const role of roles) {
    for (const name of role.entitlements) if (known.has(name)) entitlements.add(name as EntitlementName);
  }
  return { id: row.id, login: row.login, displayName: displayNameOf(row), entitlements, roles: roles.map((r) => r.name) };
}

function findUserRow(db: Db | Tx, login: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where(sql<boolean>`lower(login) = lower(${login})`).executeTakeFirst();
}

async function assignRoles(trx: Tx, userId: string, roleNames: string[]): Promise<void> {
  if (roleNames.length === 0) return;
  const lowered = [...new Set(roleNames.map((name) => name.toLowerCase()))];
  const roles = await trx
    .selectFrom('roles')
    .select(['id', 'name'])
    .where(sql<boolean>`lower(name) = ANY(${lowered}::text[])`)
    .execute();
  const found = new Set(roles.map((r) => r.name.toLowerCase()));
  const missing = roleNames.filter((name) => !found.has(name.toLowerCase()));
  if (missing.length > 0) throw new UnknownRoleError(missing);
  await trx
    .insertInto('user_roles')
    .values(roles.map((role) => ({ user_id: userId, role_id: role.id })))
    .onConflict((oc) => oc.columns(['user_id', 'role_id']).doNothing())
    .execute();
}
