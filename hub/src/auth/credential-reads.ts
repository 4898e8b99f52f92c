/**
 * The read every API request starts with, batched: the user rows of the logins being checked, with
 * their roles, and, when a waiting request lists devices, the device lists' change stamps, in ONE statement for
 * every request waiting at that moment. A round trip to PostgreSQL was most of what a request cost (the hub sat
 * idle waiting on it), so one client makes one round trip per request and 200 clients make far fewer than 200.
 *
 * Correctness: a request's read is a statement that starts after the request joined it (a batch already running
 * is never joined; the next one starts when it ends), so it sees every write committed before the request came,
 * on any hub replica: a rotated token or a disabled user fails at once, and a list read with these stamps shows
 * every change its client made before asking (read-your-writes).
 */
import { sql } from 'kysely';
import { runPrepared, type Db } from '../store/database';
import type { UserRow } from '../store/schema';
import { listStampsSql, type ListStamps } from '../domain/device-list-cache';

export interface RoleGrant {
  name: string;
  entitlements: string[];
}

export interface CredentialRead {
  /** The user whose login (case-insensitive) is this one, if any. */
  user?: UserWithRoles;
  /** The device lists' change stamps as this read saw them, when asked for. */
  listStamps?: ListStamps;
}

interface Waiter {
  login: string;
  resolve: (read: CredentialRead) => void;
  reject: (err: unknown) => void;
}

interface Batch {
  waiters: Waiter[];
  withListStamps: boolean;
}

/** A batch holds at most this many logins; more waiting requests go to the batches after it. */
const MAX_BATCH = 500;

export class CredentialReads {
  private running = false;
  private readonly waiting: Batch[] = [];

  constructor(private readonly db: Db) {}

  /** The user of `login` (and the list stamps when `withListStamps`), read by a statement that starts after this call. */
  read(login: string, withListStamps: boolean): Promise<CredentialRead> {
    return new Promise((resolve, reject) => {
      let batch = this.waiting.at(-1);
      if (!batch || batch.waiters.length >= MAX_BATCH) this.waiting.push(batch = { waiters: [], withListStamps: false });
      batch.waiters.push({ login, resolve, reject });
      batch.withListStamps ||= withListStamps;
      if (!this.running) this.runNext();
    });
  }

  private runNext(): void {
    const batch = this.waiting.shift();
    if (!batch) return;
    this.running = true;
    readUsers(this.db, [...new Set(batch.waiters.map((w) => w.login))], batch.withListStamps).then((read) => {
      for (const waiter of batch.waiters) waiter.resolve({ user: read.users.get(waiter.login), listStamps: read.listStamps });
    }, (err: unknown) => {
      for (const waiter of batch.waiters) waiter.reject(err);
    }).finally(() => {
      this.running = false;
      this.runNext();
    });
  }
}

/** The user columns a check reads: every column but the password hash, named (see runPrepared). */
const USER_COLUMNS = [
  'id', 'login', 'first_name', 'middle_name', 'last_name', 'is_active', 'token_sha256', 'profile', 'created_at',
  'last_login_at', 'last_seen_at',
] as const satisfies readonly (keyof UserRow)[];
export type CheckedUserRow = Pick<UserRow, typeof USER_COLUMNS[number]>;

export interface UserWithRoles extends CheckedUserRow {
  granted_roles: RoleGrant[];
}

/** One prepared statement: each asked login with its user row and roles (none when unknown), and the stamps when wanted. */
export async function readUsers(
  db: Db, logins: string[], withListStamps: boolean,
): Promise<{ users: Map<string, UserWithRoles>; listStamps?: ListStamps }> {
  const stamps = withListStamps ? listStampsSql() : sql`NULL::text`;
  const columns = sql.join(USER_COLUMNS.map((column) => sql.ref(`users.${column}`)));
  // One login (most batches) as a plain parameter: PostgreSQL then keeps one generic plan. For `unnest` of an
  // array it re-plans on every execution (it estimates 10 rows generically, 1 when it sees the value).
  const asked = logins.length === 1 ? sql`(SELECT ${logins[0]}::text AS login) AS asked` : sql`unnest(${logins}::text[]) AS asked(login)`;
  const rows = await runPrepared(db, sql<UserWithRoles & { asked_login: string; list_stamps: string | null }>`
    SELECT asked.login AS asked_login, ${stamps} AS list_stamps, u.* FROM ${asked}
    LEFT JOIN LATERAL (
      SELECT ${columns}, coalesce((SELECT json_agg(json_build_object('name', roles.name, 'entitlements', roles.entitlements)
        ORDER BY roles.name) FROM user_roles JOIN roles ON roles.id = user_roles.role_id WHERE user_roles.user_id = users.id),
        '[]') AS granted_roles
      FROM users WHERE lower(users.login) = lower(asked.login) LIMIT 1
    ) u ON true`);
  const users = new Map<string, UserWithRoles>();
  for (const { asked_login: asked, list_stamps: _stamps, ...row } of rows) if (row.id) users.set(asked, row);
  const listStamps = rows[0]?.list_stamps ?? undefined;
  return { users, listStamps };
}
