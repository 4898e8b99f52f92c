/**
 * The PostgreSQL advisory locks replicas coordinate by. A session lock lives exactly as long as the connection
 * that took it: when a hub process dies, the kernel closes its sockets, PostgreSQL ends its backends and every
 * lock the process held is free at once, with no timeout to wait out. Two-key form: the first key says what is
 * locked, the second is a hash of the thing's id (a collision only makes two gateways share one lock).
 */
import { sql, type RawBuilder } from 'kysely';
import pg from 'pg';

export const LockKind = {
  /** A gateway's link: held by the replica that owns it, on the link's own connection. */
  gatewayLink: 16_001,
  /** A replica's liveness: held from its start to its end on its registry connection. */
  replica: 16_002,
  /** Work that runs once per lab (fleet/lab-leader.ts). */
  leader: 16_003,
  /** Metrics maintenance at start: one replica at a time. */
  maintenance: 16_004,
  /** Creating or renaming users or roles: one at a time per kind, so confusable names cannot pass together. */
  names: 16_005,
  /** Replacing the database routines at start (store/routines): one replica at a time. */
  routines: 16_006,
  /** Serving the waiting line for devices (domain/line-server.ts): one replica's pass at a time, per transaction. */
  waitingLine: 16_020,
  /** Giving tables their change-notice trigger at start (store/table-change-notices.ts): one replica at a time. */
  tableNotices: 16_040,
} as const;

/** The second key of a lock on `id`: a non-negative int4, so pg_locks shows it as the same oid. */
export const lockKeySql = (id: string | RawBuilder<unknown>): RawBuilder<number> => sql<number>`(hashtext((${id})::text) & 2147483647)`;

/**
 * The granted locks of `kind` in this database, as a condition on the pg_locks row `l`. pg_locks is readable by any
 * role; the database column keeps databases of one server apart (each test file has its own).
 */
export function grantedLocksSql(kind: number): RawBuilder<boolean> {
  return sql<boolean>`l.locktype = 'advisory' AND l.granted
    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND l.classid = ${sql.lit(kind)}::oid AND l.objsubid = 2`;
}

/** True (as SQL) while some session of this database holds the lock of `kind` on `id`. */
export function lockHeldSql(kind: number, id: RawBuilder<unknown> | string): RawBuilder<boolean> {
  return sql<boolean>`EXISTS (SELECT 1 FROM pg_locks l WHERE ${grantedLocksSql(kind)} AND l.objid = ${lockKeySql(id)}::oid)`;
}

/** Runs `fn` while holding the lock of `kind` (waiting for it), on a connection of its own. */
export async function withSessionLock<T>(url: string, kind: number, fn: () => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1, 0)', [kind]);
    return await fn();
  } finally {
    await client.end().catch(() => undefined);
  }
}
