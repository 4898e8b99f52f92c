/**
 * Role administration (extension; wire rule 23 of docs/wire-rules.md, "roles are administrable"): `GET /Role` and
 * `POST /Role?add|update|delete`, entitlement UserRolesModify. Rules:
 *  - the built-in roles Administrator and Tester cannot be renamed or deleted (the hub looks them up by name:
 *    Administrator on every start, Tester as the default role of imported users);
 *  - Administrator holds every entitlement by definition, so its entitlements cannot be changed;
 *  - entitlement names are the PascalCase wire names, matched case-insensitively; an unknown one fails;
 *  - a role still assigned to users cannot be deleted (the failure says how many hold it);
 *  - nobody creates, changes or deletes a role granting an entitlement they do not hold (`./privilege`).
 */
import { sql } from 'kysely';
import { ADMINISTRATOR_ROLE, ApiFailure, Entitlement, type Entitlement as EntitlementName, type Role } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { hasEntitlement, requireEntitlement } from '../auth/entitlements';
import { endWebSessions, losesEntitlements } from '../auth/session-revocation';
import { isUniqueViolation, withTx, type Db, type Tx } from '../store/database';
import { readDeferred, type Deferred } from './deferred-input';
import { requireDistinctName } from './name-rules';
import { requireGrantWithinReach, requireRoleWithinReach } from './privilege';

export const roleNotFound = (ref: string): string => `Role '${ref}' not found.`;
const roleExists = (name: string): string => `A role named '${name}' already exists.`;
const builtInRoleFixed = (name: string, what: string): string => `The built-in role '${name}' cannot be ${what}.`;
const roleInUse = (name: string, users: number): string =>
  `Role '${name}' is assigned to ${users} user(s); remove it from them before deleting it.`;

/** A role named by its id (Guid) or its name (case-insensitive). */
export type RoleRef = { id: string } | { name: string };

/** A checked change of a role: its name, its entitlements (known names, canonical order). */
export interface RoleChanges {
  name?: string;
  entitlements?: EntitlementName[];
  /** Minutes (0: no maximum); null: the lab's maximum applies. */
  maxLeaseMinutes?: number | null;
}

/** GET /Role: every role with UserRolesModify; otherwise only the caller's own roles (like the User list rule). */
export async function listRoles(db: Db, caller: AuthenticatedUser): Promise<Role[]> {
  let q = db.selectFrom('roles').selectAll();
  if (!hasEntitlement(caller, 'UserRolesModify')) {
    q = q.where('id', 'in', (eb) => eb.selectFrom('user_roles').select('role_id').where('user_id', '=', caller.id));
  }
  const rows = await q.orderBy(sql`lower(name)`).execute();
  return rows.map((r) => ({
    id: r.id, name: r.name, entitlements: orderEntitlements(r.entitlements), isBuiltIn: r.built_in,
    maxLeaseMinutes: r.max_lease_minutes ?? undefined,
  }));
}

export async function addRole(db: Db, caller: AuthenticatedUser, changes: Deferred<RoleChanges>): Promise<void> {
  requireEntitlement(caller, 'UserRolesModify');
  const { name, entitlements = [], maxLeaseMinutes } = readDeferred(changes);
  if (name === undefined) throw new ApiFailure('A role needs a name.');
  requireGrantWithinReach(caller, entitlements);
  await translateDuplicate(name, () => withTx(db, async (trx) => {
    await requireDistinctName(trx, 'role', name);
    await trx.insertInto('roles').values({ name, entitlements, built_in: false, max_lease_minutes: maxLeaseMinutes ?? null }).execute();
  }));
}

/** Renames a role and/or replaces its entitlements. */
export async function updateRole(
  db: Db, caller: AuthenticatedUser, ref: RoleRef, changes: Deferred<RoleChanges>,
): Promise<void> {
  requireEntitlement(caller, 'UserRolesModify');
  const { name, entitlements, maxLeaseMinutes } = readDeferred(changes);
  if (entitlements !== undefined) requireGrantWithinReach(caller, entitlements);
  await translateDuplicate(name ?? '', () => withTx(db, async (trx) => {
    const role = await findRole(trx, ref);
    requireRoleWithinReach(caller, role);
    if (name !== undefined && name !== role.name) {
      if (role.built_in) throw new ApiFailure(builtInRoleFixed(role.name, 'renamed'));
      await requireDistinctName(trx, 'role', name, role.id);
      await trx.updateTable('roles').set({ name }).where('id', '=', role.id).execute();
    }
    if (maxLeaseMinutes !== undefined) {
      await trx.updateTable('roles').set({ max_lease_minutes: maxLeaseMinutes }).where('id', '=', role.id).execute();
    }
    if (entitlements !== undefined) {
      const unchanged = sameSet(entitlements, role.entitlements);
      if (isAdministrator(role.name) && !unchanged) {
        throw new ApiFailure(builtInRoleFixed(role.name, 'given other entitlements: it holds every entitlement'));
      }
      if (!unchanged) await trx.updateTable('roles').set({ entitlements }).where('id', '=', role.id).execute();
      if (losesEntitlements(role.entitlements, new Set(entitlements))) {
        const holders = await trx.selectFrom('user_roles').select('user_id').where('role_id', '=', role.id).execute();
        await endWebSessions(trx, holders.map((holder) => holder.user_id));
      }
    }
  }));
}

export async function deleteRole(db: Db, caller: AuthenticatedUser, ref: RoleRef): Promise<void> {
  requireEntitlement(caller, 'UserRolesModify');
  await withTx(db, async (trx) => {
    const role = await findRole(trx, ref);
    requireRoleWithinReach(caller, role);
    if (role.built_in) throw new ApiFailure(builtInRoleFixed(role.name, 'deleted'));
    const { count } = await trx.selectFrom('user_roles').select((eb) => eb.fn.countAll<string>().as('count'))
      .where('role_id', '=', role.id).executeTakeFirstOrThrow();
    if (Number(count) > 0) throw new ApiFailure(roleInUse(role.name, Number(count)));
    await trx.deleteFrom('roles').where('id', '=', role.id).execute();
  });
}

/** Locks the role row, so a concurrent assignment or rename waits for this change. */
async function findRole(trx: Tx, ref: RoleRef) {
  let q = trx.selectFrom('roles').selectAll().forUpdate();
  q = 'id' in ref ? q.where('id', '=', ref.id) : q.where(sql<boolean>`lower(name) = lower(${ref.name.trim()})`);
  const role = await q.executeTakeFirst();
  if (!role) throw new ApiFailure(roleNotFound('id' in ref ? ref.id : ref.name));
  return role;
}

/** Entitlement names in the canonical order (unknown names last). */
export function orderEntitlements(names: readonly string[]): string[] {
  const rank = (name: string) => {
    const i = (Entitlement as readonly string[]).indexOf(name);
    return i < 0 ? Entitlement.length : i;
  };
  return [...names].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

const sameSet = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === new Set(b).size && a.every((x) => b.includes(x));

const isAdministrator = (name: string): boolean => name.toLowerCase() === ADMINISTRATOR_ROLE.toLowerCase();

async function translateDuplicate<T>(name: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isUniqueViolation(err)) throw new ApiFailure(roleExists(name));
    throw err;
  }
}
