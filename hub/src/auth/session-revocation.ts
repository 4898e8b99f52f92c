/**
 * When dashboard sessions end before their time: a sign-in is worth what the credentials behind it are worth now.
 * Rotating a user's API token (the answer to a leaked one), deactivating the user, or taking entitlements away
 * from them (their roles, or a role they hold) ends every session they signed in with, in the same transaction as
 * the change; they sign in again with what they hold now.
 */
import { sql } from 'kysely';
import type { Db, Tx } from '../store/database';

export async function endWebSessions(db: Db | Tx, userIds: readonly string[]): Promise<void> {
  if (userIds.length === 0) return;
  await db.deleteFrom('web_sessions').where('user_id', 'in', userIds).execute();
}

/** The union of the entitlement names the user's roles grant now. */
export async function grantedEntitlements(db: Db | Tx, userId: string): Promise<Set<string>> {
  const rows = await db.selectFrom('user_roles').innerJoin('roles', 'roles.id', 'user_roles.role_id')
    .select(sql<string>`unnest(roles.entitlements)`.as('entitlement'))
    .where('user_roles.user_id', '=', userId).execute();
  return new Set(rows.map((row) => row.entitlement));
}

/** Whether `after` lacks an entitlement `before` had. */
export function losesEntitlements(before: Iterable<string>, after: ReadonlySet<string>): boolean {
  for (const name of before) if (!after.has(name)) return true;
  return false;
}
