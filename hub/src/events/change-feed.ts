/**
 * What changed in the records, heard from PostgreSQL: triggers (migration 013) append to `change_feed` and NOTIFY
 * `devicelab_changes`; this process LISTENs on one dedicated connection and hands each change to its subscribers.
 * Every hub replica on the same database hears the same changes. After a lost connection it reconnects and
 * replays from the table what it missed, so subscribers see every change at least once.
 *
 * Positions are taken when a change is written but heard at commit, so a transaction that took position N and
 * commits after one that took N+1 is heard second: changes arrive in commit order, not position order. Duplicates
 * are therefore recognised by the positions recently delivered, not by a high-water mark (which would drop N).
 */
import { sql } from 'kysely';
import pg from 'pg';
import type { Logger } from '@devicelab/shared';
import type { Db } from '../store/database';

export const CHANGE_CHANNEL = 'devicelab_changes';
/** How long changes stay replayable for clients that reconnect with Last-Event-ID. */
const KEEP_MS = 15 * 60_000;
const PRUNE_EVERY_MS = 60_000;
const RECONNECT_MS = 1000;
/** A reconnecting client is replayed at most this many changes; further back it is told to reload. */
export const MAX_REPLAY = 5000;
/** How many delivered positions are remembered to recognise a change heard twice (notified and replayed). */
const REMEMBERED = 4096;

export type ChangeKind = 'device' | 'gateway' | 'usbHub' | 'job' | 'history' | 'reservation';

export interface Change {
  /** Position in the feed (bigint as a decimal string): the SSE event id. */
  seq: string;
  kind: ChangeKind;
  objectId: string;
}

type Subscriber = (change: Change) => void;

export interface Replay {
  changes: Change[];
  /** The client's last id is older than what is kept (or too far behind): it must reload everything. */
  gap: boolean;
}

export class ChangeFeed {
  private readonly subscribers = new Set<Subscriber>();
  private client: pg.Client | undefined;
  /** The highest position heard: a fresh client's starting point. */
  private lastSeq = 0n;
  /** Positions delivered recently, oldest first. */
  private readonly delivered = new Set<string>();
  private stopped = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly pruneTimer: NodeJS.Timeout;

  constructor(private readonly db: Db, private readonly url: string, private readonly logger: Logger) {
    this.pruneTimer = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.pruneTimer.unref();
  }

  /** Resolves once LISTEN is in place: a change committed after this is heard. */
  async start(): Promise<void> {
    const latest = await this.db.selectFrom('change_feed').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst();
    this.lastSeq = BigInt(latest?.id ?? 0);
    await this.connect();
  }

  subscribe(subscriber: Subscriber): () => void {
    this.subscribers.add(subscriber);
    return () => this.subscribers.delete(subscriber);
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  /** Changes after `seq` (a Last-Event-ID), oldest first. */
  async since(seq: bigint): Promise<Replay> {
    const oldest = await this.db.selectFrom('change_feed').select((eb) => eb.fn.min('id').as('id')).executeTakeFirst();
    const rows = await this.db.selectFrom('change_feed').select(['id', 'kind', 'object_id'])
      .where('id', '>', seq.toString()).orderBy('id').limit(MAX_REPLAY + 1).execute();
    const gap = (oldest?.id != null && BigInt(oldest.id) > seq + 1n) || rows.length > MAX_REPLAY;
    return { changes: gap ? [] : rows.map(toChange), gap };
  }

  /** The newest position: a fresh client starts from here. */
  get position(): string {
    return this.lastSeq.toString();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.pruneTimer);
    clearTimeout(this.reconnectTimer);
    this.subscribers.clear();
    await this.client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url });
    client.on('notification', (message) => {
      if (message.channel === CHANGE_CHANNEL && message.payload) this.deliver(parsePayload(message.payload));
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    await client.connect();
    await client.query(`LISTEN ${CHANGE_CHANNEL}`);
    this.client = client;
  }

  private lost(client: pg.Client, err?: Error): void {
    if (this.stopped || this.client !== client) return;
    this.client = undefined;
    if (err) this.logger.warn({ err }, 'change feed connection lost; reconnecting');
    client.end().catch(() => undefined);
    this.reconnectTimer = setTimeout(() => void this.reconnect(), RECONNECT_MS);
  }

  private async reconnect(): Promise<void> {
    if (this.stopped) return;
    try {
      await this.connect();
      // Whatever was committed while we were not listening, including late commits of positions below the highest
      // heard (from the oldest remembered one on; if that is too far back, from the highest).
      const oldest = this.delivered.values().next().value;
      let missed = await this.since(oldest === undefined ? this.lastSeq : BigInt(oldest));
      if (missed.gap) missed = await this.since(this.lastSeq);
      for (const change of missed.changes) this.deliver(change);
    } catch (err) {
      this.logger.warn({ err }, 'change feed reconnect failed; trying again');
      this.reconnectTimer = setTimeout(() => void this.reconnect(), RECONNECT_MS);
    }
  }

  private deliver(change: Change | undefined): void {
    if (!change) return;
    if (this.delivered.has(change.seq)) return; // replayed after a reconnect and also notified
    this.delivered.add(change.seq);
    if (this.delivered.size > REMEMBERED) this.delivered.delete(this.delivered.values().next().value!);
    const seq = BigInt(change.seq);
    if (seq > this.lastSeq) this.lastSeq = seq;
    for (const subscriber of this.subscribers) {
      try {
        subscriber(change);
      } catch (err) {
        this.logger.error({ err }, 'change subscriber failed');
      }
    }
  }

  private async prune(): Promise<void> {
    try {
      await this.db.deleteFrom('change_feed').where('changed_at', '<', new Date(Date.now() - KEEP_MS)).execute();
    } catch (err) {
      this.logger.warn({ err }, 'change feed prune failed');
    }
  }
}

const KINDS = new Set<string>(['device', 'gateway', 'usbHub', 'job', 'history', 'reservation']);

function parsePayload(payload: string): Change | undefined {
  const [seq, kind, objectId] = payload.split(' ');
  if (!seq || !/^\d+$/.test(seq) || !KINDS.has(kind) || !objectId) return undefined;
  return { seq, kind: kind as ChangeKind, objectId };
}

function toChange(row: { id: string; kind: string; object_id: string }): Change {
  return { seq: String(row.id), kind: row.kind as ChangeKind, objectId: row.object_id };
}

/** Records a change that lives outside a table (a USB hub's ports, reported by its gateway). */
export async function noteChange(db: Db, kind: ChangeKind, objectId: string): Promise<void> {
  await sql`SELECT note_change(${kind}, ${objectId})`.execute(db);
}
