/**
 * The records database handle: kysely over a pg.Pool, one `withTx` helper for every transaction, and
 * PostgreSQL errors recognised by SQLSTATE (never by message text, which is localised and version-dependent).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { Kysely, PostgresDialect, type IsolationLevel, type RawBuilder, type Transaction } from 'kysely';
import pg from 'pg';
import type { Database } from './schema';

/**
 * Set while a `withTx` callback runs, so a stray use of the root handle inside it fails loudly. It is a check for
 * the test suite (scripts/jest/transaction-guard.ts turns it on), not for service: an AsyncLocalStorage installs
 * promise hooks that make every promise of the process dearer (measured: about 15 % of the CPU of a kept read and of
 * a relayed WebDriver command).
 */
let insideTransaction: AsyncLocalStorage<true> | undefined;

/** Turns the guard above on for this process. */
export function guardTransactions(): void {
  insideTransaction ??= new AsyncLocalStorage<true>();
}

/**
 * A pool that refuses to hand out a second connection from inside a transaction callback. Using `db` instead of
 * `trx` there silently runs outside the transaction (and under load can exhaust the pool and deadlock);
 * failing at once points at the bug.
 */
class TransactionGuardedPool extends pg.Pool {
  override connect(...args: unknown[]): any {
    if (insideTransaction?.getStore()) {
      const err = new Error('the root database handle was used inside withTx; use the transaction handle');
      const callback = args[0];
      if (typeof callback === 'function') return (callback as (e: Error) => void)(err);
      return Promise.reject(err);
    }
    return (super.connect as (...a: unknown[]) => unknown)(...args);
  }
}

/**
 * A client that says when its server went away. pg reports a connection closed under it (postmaster killed,
 * server crashed) as a plain "Connection terminated unexpectedly" Error with no code; such errors, and any
 * other error without a SQLSTATE once the connection has ended, are rethrown as ConnectionLostError, which
 * carries SQLSTATE 08006 (connection_failure) as libpq does, so callers match SQLSTATEs only.
 */
class ConnectionAwareClient extends pg.Client {
  private connectionEnded = false;

  constructor(config?: string | pg.ClientConfig) {
    super(config);
    // Registered before pg's own listener (added in connect), so the flag is set before any query is failed.
    (this as unknown as { connection: NodeJS.EventEmitter }).connection.once('end', () => { this.connectionEnded = true; });
  }

  override connect(...args: unknown[]): any {
    return this.classifying((super.connect as (...a: unknown[]) => unknown).bind(this), args);
  }

  override query(...args: unknown[]): any {
    return this.classifying((super.query as (...a: unknown[]) => unknown).bind(this), args);
  }

  /** Calls `call` with `args`, classifying the error of its callback or promise. */
  private classifying(call: (...a: unknown[]) => unknown, args: unknown[]): unknown {
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = (err: unknown, ...rest: unknown[]) => (callback as (...a: unknown[]) => unknown)(this.classified(err), ...rest);
      return call(...args);
    }
    const result = call(...args);
    return result instanceof Promise ? result.catch((err: unknown) => { throw this.classified(err); }) : result;
  }

  private classified(err: unknown): unknown {
    if (!err || !this.connectionEnded || sqlStateOf(err) !== undefined) return err;
    return new ConnectionLostError(err);
  }
}

/** The connection to PostgreSQL closed under a query or a connect: the server is gone, not the query wrong. */
class ConnectionLostError extends Error {
  readonly code = SqlState.connectionFailure;

  constructor(cause: unknown) {
    super('the connection to PostgreSQL was lost', { cause });
    this.name = 'ConnectionLostError';
  }
}

export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;

interface CreateDatabaseOptions {
  /** Pool size (default 20: retains under contention wait on the pool, not on PostgreSQL; pg's own default is 10). */
  maxConnections?: number;
}

/** Opens a pooled kysely handle on `url` (a `postgres://` connection string). Close it with `db.destroy()`. */
export function createDatabase(url: string, options: CreateDatabaseOptions = {}): Db {
  const pool = new TransactionGuardedPool({
    connectionString: url, max: options.maxConnections ?? 20, Client: ConnectionAwareClient as typeof pg.Client,
  });
  // An idle client losing its server (restart, admin kill) emits 'error' on the pool; unhandled it would crash
  // the process. The next query simply gets a fresh connection.
  pool.on('error', () => undefined);
  // A client in use (mid-query, or in a transaction) has no listener of the pool's: when its server goes away
  // (shutdown, admin kill) it would emit an unhandled 'error' and crash the process. The pending query is
  // rejected anyway, and the pool drops the client once it is released.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  pools.set(db, pool);
  return db;
}

/** The pool under each handle createDatabase made, for runStatementBatch. */
const pools = new WeakMap<Db, pg.Pool>();

/** The pool under a handle createDatabase made (its counts are the hub's pool-use metrics). */
export function poolOf(db: Db): pg.Pool | undefined {
  return pools.get(db);
}

/**
 * Runs several `;`-separated statements as one simple-protocol message: one round trip, one implicit transaction
 * (so `SET LOCAL` holds for the statements after it), one result per statement. Kysely keeps only a single
 * result, hence the pool directly. The simple protocol has no parameters: only for SQL whose every value the
 * caller produced and rendered itself, never request text.
 */
export async function runStatementBatch(db: Db, text: string): Promise<pg.QueryResult[]> {
  const pool = pools.get(db);
  if (!pool) throw new Error('runStatementBatch needs a handle made by createDatabase');
  // connect/release rather than pool.query, which drops the connection on any error (e.g. a statement timeout);
  // after a failed message the implicit transaction is already rolled back and the connection is clean.
  const client = await pool.connect();
  try {
    const result = (await client.query(text)) as pg.QueryResult | pg.QueryResult[];
    return Array.isArray(result) ? result : [result];
  } finally {
    client.release();
  }
}

/**
 * Runs one statement as a named prepared statement: PostgreSQL parses and plans it once per connection instead of
 * on every call. For the statements every request runs (auth/credential-reads.ts), where planning cost more than
 * executing. The name is a digest of the text, so two texts never share one. Select named columns, not `*`: a
 * column added later by a migration would change a prepared `*` statement's result type and fail it.
 */
export async function runPrepared<R>(db: Db, query: RawBuilder<R>): Promise<R[]> {
  const pool = pools.get(db);
  if (!pool) throw new Error('runPrepared needs a handle made by createDatabase');
  const { sql: text, parameters } = query.compile(db);
  const name = `devicelab_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
  const result = await pool.query<R & pg.QueryResultRow>({ name, text, values: parameters as unknown[] });
  return result.rows;
}

interface TxOptions {
  isolation?: IsolationLevel;
}

/** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
export async function withTx<T>(db: Db, fn: (trx: Tx) => Promise<T>, options: TxOptions = {}): Promise<T> {
  let builder = db.transaction();
  if (options.isolation) builder = builder.setIsolationLevel(options.isolation);
  return builder.execute((trx) => (insideTransaction ? insideTransaction.run(true, () => fn(trx)) : fn(trx)));
}

/** SQLSTATE codes the hub reacts to (https://www.postgresql.org/docs/15/errcodes-appendix.html). */
const SqlState = {
  uniqueViolation: '23505',
  foreignKeyViolation: '23503',
  exclusionViolation: '23P01', // an exclusion constraint, e.g. two bookings of one device that overlap
  invalidCatalogName: '3D000', // database does not exist
  duplicateDatabase: '42P04',
  objectInUse: '55006', // e.g. a template database that still has sessions
  connectionFailure: '08006', // class 08 is "connection exception"
  adminShutdown: '57P01', // the server terminated our session (fast shutdown)
  crashShutdown: '57P02', // another server process crashed; every session is ended
  cannotConnectNow: '57P03', // server starting up, recovering or shutting down
  serializationFailure: '40001',
  deadlockDetected: '40P01',
} as const;

/** Node socket errors meaning the server cannot be reached (the server never answered, so no SQLSTATE). */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN',
]);

/** The SQLSTATE of a PostgreSQL error, or undefined for anything else. */
export function sqlStateOf(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  // Node's own errors (ECONNREFUSED, ...) also carry `code`; SQLSTATEs are exactly five characters.
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

export const isUniqueViolation = (err: unknown): boolean => sqlStateOf(err) === SqlState.uniqueViolation;
export const isForeignKeyViolation = (err: unknown): boolean => sqlStateOf(err) === SqlState.foreignKeyViolation;
export const isExclusionViolation = (err: unknown): boolean => sqlStateOf(err) === SqlState.exclusionViolation;
export const isMissingDatabase = (err: unknown): boolean => sqlStateOf(err) === SqlState.invalidCatalogName;
export const isDuplicateDatabase = (err: unknown): boolean => sqlStateOf(err) === SqlState.duplicateDatabase;
export const isObjectInUse = (err: unknown): boolean => sqlStateOf(err) === SqlState.objectInUse;
/** PostgreSQL rolled the transaction back to break a conflict with another one: the same work may simply run again. */
export const isTransientConflict = (err: unknown): boolean => {
  const state = sqlStateOf(err);
  return state === SqlState.deadlockDetected || state === SqlState.serializationFailure;
};
/**
 * The database went away under us (shut down, crashed, restarting, unreachable): not a bug of the query. Decided
 * by SQLSTATE (class 08, 57P01-57P03) and by socket error codes, never by message text.
 */
export const isDatabaseUnavailable = (err: unknown): boolean => {
  const state = sqlStateOf(err);
  if (state !== undefined) {
    return state.startsWith('08')
      || state === SqlState.adminShutdown || state === SqlState.crashShutdown || state === SqlState.cannotConnectNow;
  }
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && UNREACHABLE_CODES.has(code);
};

/** The name of the unique constraint or index a unique violation hit (e.g. `users_login_key`). */
export function violatedConstraint(err: unknown): string | undefined {
  const constraint = (err as { constraint?: unknown } | null)?.constraint;
  return typeof constraint === 'string' ? constraint : undefined;
}
