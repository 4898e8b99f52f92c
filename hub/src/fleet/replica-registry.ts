/**
 * This replica in `hub_replicas`, live while it runs: one dedicated connection holds the replica's advisory lock
 * (others see it in pg_locks, and see it gone the moment the process dies), LISTENs for relayed commands and, once
 * won, holds the lab's leader lock. The row's heartbeat is for people reading the table; liveness is the lock.
 */
import { sql } from 'kysely';
import pg from 'pg';
import type { Logger } from '@devicelab/shared';
import type { Db } from '../store/database';
import { grantedLocksSql, LockKind, lockHeldSql, lockKeySql } from './advisory-locks';
import { thisReplica, type HubReplica } from './replica';

export const RELAY_CHANNEL = 'devicelab_relay';
const HEARTBEAT_MS = 5_000;
const RECONNECT_MS = 1_000;

export interface LiveReplica { id: string; hostname: string; version: string; apiAddress: string | null; startedAt: Date }

/** The replicas whose liveness lock is held now, oldest first. */
export async function liveReplicas(db: Db): Promise<LiveReplica[]> {
  const rows = await db.selectFrom('hub_replicas').select(['id', 'hostname', 'version', 'api_address', 'started_at'])
    .where(lockHeldSql(LockKind.replica, sql.ref('hub_replicas.id'))).orderBy('started_at').execute();
  return rows.map((row) => ({ id: row.id, hostname: row.hostname, version: row.version, apiAddress: row.api_address, startedAt: row.started_at }));
}

/** Whether the replica `id` is live now. */
export async function isReplicaLive(db: Db, id: string): Promise<boolean> {
  const row = await db.selectNoFrom(lockHeldSql(LockKind.replica, id).as('live')).executeTakeFirstOrThrow();
  return row.live;
}

/**
 * For kept reads (events/freshness-proof.ts): how many replicas hold their liveness lock now, and whether `id` is one
 * of them. Compiled once to plain text for the listening connection, which asks it every 100 ms.
 */
export function livePeersQuery(db: Db, id: string): { text: string; values: unknown[] } {
  const query = sql`SELECT count(*)::int AS live, coalesce(bool_or(l.objid = ${lockKeySql(id)}::oid), false) AS me
    FROM pg_locks l WHERE ${grantedLocksSql(LockKind.replica)}`.compile(db);
  return { text: query.sql, values: [...query.parameters] };
}

export class ReplicaRegistry {
  private client: pg.Client | undefined;
  private leader = false;
  private stopped = false;
  private heartbeat: NodeJS.Timeout | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<(payload: string) => void>();
  apiAddress: string | null = null;
  linkAddress: string | null = null;

  constructor(
    private readonly db: Db, private readonly url: string, private readonly version: string, private readonly logger: Logger,
    /** Which replica this is: this process, except in tests that run several in one process. */
    readonly replica: HubReplica = thisReplica,
  ) {}

  /** Resolves once the replica is recorded and live (its lock held) and relayed commands are heard. */
  async start(): Promise<void> {
    await this.connect();
    this.heartbeat = setInterval(() => {
      this.db.updateTable('hub_replicas').set({ heartbeat_at: sql`now()` }).where('id', '=', this.replica.id).execute()
        .catch((err: unknown) => this.logger.warn({ err }, 'replica heartbeat failed'));
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** Records where this replica serves (shown by GET /Service). */
  async setAddresses(apiAddress: string, linkAddress: string): Promise<void> {
    this.apiAddress = apiAddress;
    this.linkAddress = linkAddress;
    await this.db.updateTable('hub_replicas').set({ api_address: apiAddress, link_address: linkAddress })
      .where('id', '=', this.replica.id).execute();
  }

  /** Hears every payload on RELAY_CHANNEL. */
  onRelayNotification(listener: (payload: string) => void): void {
    this.listeners.add(listener);
  }

  get isLeader(): boolean {
    return this.leader;
  }

  /** Takes the leader lock when free; true while this replica holds it. */
  async tryLead(): Promise<boolean> {
    if (this.leader || !this.client) return this.leader;
    const { rows } = await this.client.query<{ locked: boolean }>(
      'SELECT pg_try_advisory_lock($1, 0) AS locked', [LockKind.leader]);
    this.leader = rows[0]?.locked === true;
    if (this.leader) this.logger.info({ replica: this.replica.id }, 'this replica leads the lab');
    return this.leader;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.heartbeat);
    clearTimeout(this.reconnectTimer);
    await this.db.deleteFrom('hub_replicas').where('id', '=', this.replica.id).execute().catch(() => undefined);
    await this.client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url });
    client.on('notification', (message) => {
      if (message.channel !== RELAY_CHANNEL || !message.payload) return;
      for (const listener of this.listeners) listener(message.payload);
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    await client.connect();
    await client.query('SELECT pg_advisory_lock($1, hashtext($2) & 2147483647)', [LockKind.replica, this.replica.id]);
    await client.query(
      `INSERT INTO hub_replicas (id, hostname, version, api_address, link_address, started_at) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`,
      [this.replica.id, this.replica.hostname, this.version, this.apiAddress, this.linkAddress, this.replica.startedAt]);
    await client.query(`LISTEN ${RELAY_CHANNEL}`);
    this.client = client;
  }

  /** The connection went away (PostgreSQL restarted): others now see this replica dead; come back as soon as we can. */
  private lost(client: pg.Client, err?: Error): void {
    if (this.stopped || this.client !== client) return;
    this.client = undefined;
    this.leader = false;
    this.logger.warn({ err }, 'replica registry connection lost; reconnecting');
    client.end().catch(() => undefined);
    const retry = () => {
      this.reconnectTimer = setTimeout(() => {
        this.connect().catch((e: unknown) => {
          this.logger.warn({ err: e }, 'replica registry reconnect failed');
          if (!this.stopped) retry();
        });
      }, RECONNECT_MS);
    };
    retry();
  }
}
