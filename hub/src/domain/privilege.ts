/**
 * Nobody reaches entitlements they do not hold. A caller may change a user or obtain its
 * token, assign a role, or create, edit or delete a role only when every entitlement involved is one of its own.
 * Without this a user administrator could generate a token for an Administrator's account and act as it (and,
 * done to the built-in admin, lock the real administrator out), or hand itself a role it does not hold.
 */
import { ApiFailure, Entitlement, type Entitlement as EntitlementName } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import type { Db, Tx } from '../store/database';

const userBeyondReach = (login: string, notHeld: string[]): string =>
  `User '${login}' holds entitlements you do not hold (${notHeld.join(', ')}); only a user who holds all of them `
  + 'can change this user or generate its token.';
const roleBeyondReach = (name: string, notHeld: string[]): string =>
  `Role '${name}' grants entitlements you do not hold (${notHeld.join(', ')}); only a user who holds all of them `
  + 'can assign, change or delete this role.';
const grantBeyondReach = (notHeld: string[]): string =>
  `You cannot give a role entitlements you do not hold (${notHeld.join(', ')}).`;

/** The entitlements among `entitlements` that the caller does not hold, in the canonical order. */
function entitlementsNotHeld(caller: AuthenticatedUser, entitlements: Iterable<string>): string[] {
  const notHeld = new Set<string>();
  for (const name of entitlements) if (!caller.entitlements.has(name as EntitlementName)) notHeld.add(name);
  return Entitlement.filter((e) => notHeld.has(e));
}

/**
 * Fails unless the caller holds every entitlement of the user (through all its roles, whether or not it is
 * active). The user's role rows are share-locked, so a concurrent role change waits for this transaction.
 */
export async function requireUserWithinReach(
  trx: Db | Tx, caller: AuthenticatedUser, user: { id: string; login: string },
): Promise<void> {
  const roles = await trx.selectFrom('user_roles').innerJoin('roles', 'roles.id', 'user_roles.role_id')
    .select('roles.entitlements').where('user_roles.user_id', '=', user.id).forShare().execute();
  const notHeld = entitlementsNotHeld(caller, roles.flatMap((r) => r.entitlements));
  if (notHeld.length > 0) throw new ApiFailure(userBeyondReach(user.login, notHeld));
}

/** Fails unless the caller holds every entitlement the role grants. */
export function requireRoleWithinReach(caller: AuthenticatedUser, role: { name: string; entitlements: readonly string[] }): void {
  const notHeld = entitlementsNotHeld(caller, role.entitlements);
  if (notHeld.length > 0) throw new ApiFailure(roleBeyondReach(role.name, notHeld));
}

/** Fails unless the caller holds every entitlement it wants to put into a role. */
export function requireGrantWithinReach(caller: AuthenticatedUser, entitlements: readonly string[]): void {
  const notHeld = entitlementsNotHeld(caller, entitlements);
  if (notHeld.length > 0) throw new ApiFailure(grantBeyondReach(notHeld));
}
