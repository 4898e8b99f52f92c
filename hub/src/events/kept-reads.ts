/**
 * Reads kept in memory between writes, correct on every hub replica: a dedicated connection LISTENs for the table
 * change notices (migration 038: every write to a table, by any process, at its commit) and for the change feed,
 * and a kept value is used only while nothing it may depend on was written since it was read.
 *
 * When a request may use them: PostgreSQL signals listeners at commit, before the writer hears "committed", and a
 * backend sends what it was told before it answers its next query. So an answered query on the listening
 * connection proves that every write committed before it was sent has been heard. Two ways to hold that proof:
 * - with a window (`windowMs` > 0, DEVICELAB_KEPT_READS_LAG_MS, 50 by default), pings in the background
 *   (events/freshness-proof.ts): a request whose replica had a ping answered that was sent less than the window ago
 *   needs no round trip at all; writes through a replica answer a window after their commit while other replicas
 *   are live, so another replica's write counts at once for whoever saw it answered;
 * - otherwise (window 0, or no recent answered ping), `sync()`: an empty query on the listening connection shared by
 *   every request waiting at that moment; after it, every write committed before the request has been heard.
 * A value is kept under a stamp taken after that and BEFORE its read began; a notice that arrives meanwhile changes
 * the stamp, so a read that may have missed a write is never used again. Writes through this process's own API also
 * call `noteLocalWrite` before their answer goes out.
 *
 * Fail safe: until LISTEN is confirmed, after the connection is lost, when pings stall (none answered for 250 ms,
 * one on the wire; unanswered for PING_DEADLINE_MS, the connection counts as lost) and when a sync is not
 * answered within SYNC_DEADLINE_MS, nothing is kept and every read goes to the records as before; coming back drops
 * everything.
 */
import pg from 'pg';
import type { Logger } from '@devicelab/shared';
import { TABLE_CHANGE_CHANNEL } from '../store/table-change-notices';
import type { ChangeFeed } from './change-feed';
import { FreshnessProof, type PeersQuery } from './freshness-proof';

/** The listening connection's application_name, before `-<pid>`. */
export const LISTENER_NAME = 'devicelab-kept-reads';
const RECONNECT_MS = 500;
const RESOLVED_TRUE = Promise.resolve(true);
const RESOLVED_FALSE = Promise.resolve(false);
/** A sync not answered within this is taken for a lost connection. */
const SYNC_DEADLINE_MS = 1000;
/** Keys come from code, a few per route; a bound all the same, in case a key carries what a request named. */
const MAX_ENTRIES = 1000;

/** A kept read's dependence: the tables it is made of, or (absent) every table. */
export interface KeptReadOptions {
  tables?: readonly string[];
  /** Kept at most this long, for what changes without a write (e.g. a replica's liveness lock). */
  maxAgeMs?: number;
}

interface Entry {
  stamp: string;
  at: number;
  value: Promise<unknown>;
}

export class KeptReads {
  private client: pg.Client | undefined;
  private listening = false;
  /** The sync on the wire, and the one that waits for it (a sync counts only if it began after its caller asked). */
  private running: Promise<boolean> | undefined;
  private following: Promise<boolean> | undefined;
  private stopped = false;
  /** Bumped by what may have changed anything: the connection coming back, a write through this process. */
  private epoch = 0;
  private allChanges = 0;
  private readonly tableChanges = new Map<string, number>();
  private readonly entries = new Map<string, Entry>();
  private reconnectTimer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  /** Pings in the background, with a window; undefined: every request syncs. */
  private readonly proof: FreshnessProof | undefined;

  /**
   * `url` undefined: never live, every read goes to the records (tests of parts without a hub). `peers`: how to
   * ask which replicas are live (absent: writes always wait the window).
   */
  constructor(private readonly url: string | undefined, private readonly logger?: Logger, windowMs = 0,
    peers?: PeersQuery, private readonly now: () => number = performance.now.bind(performance)) {
    if (url !== undefined && windowMs > 0) {
      this.proof = new FreshnessProof(windowMs, peers, (client, err) => this.lost(client, err), now);
    }
  }

  static none(): KeptReads {
    return new KeptReads(undefined);
  }

  /** Starts listening; resolves once LISTEN is confirmed (or the first attempt failed: reads go to the records). */
  async start(feed?: ChangeFeed): Promise<void> {
    if (!this.url) return;
    this.unsubscribe = feed?.subscribe(() => this.changed(undefined));
    await this.connect().catch((err: unknown) => this.lost(undefined, err as Error));
  }

  /** Whether kept reads may be used now (after a sync). */
  get live(): boolean {
    return this.listening;
  }

  /**
   * Whether every write committed before now has been heard already, known without waiting (a recent answered ping):
   * what `sync()` resolves at once with true. False: ask `sync()`.
   */
  provenNow(): boolean {
    return this.listening && this.proof?.proven() === true;
  }

  /**
   * Resolves true once every write committed before this call has been heard, false when kept reads may not be
   * used (not listening, or the sync failed): the caller then reads the records as if nothing were kept.
   */
  sync(): Promise<boolean> {
    if (!this.listening) return RESOLVED_FALSE;
    if (this.proof?.proven()) return RESOLVED_TRUE;
    // Pings stalled: a sync would queue behind them; the records answer now.
    if (this.proof?.stalled()) return RESOLVED_FALSE;
    if (this.running === undefined) return this.startSync();
    this.following ??= this.running.then(() => {
      this.following = undefined;
      return this.startSync();
    });
    return this.following;
  }

  /**
   * How long a write through this process, committed now, waits before it answers, so that any request that
   * starts after the answer, on any replica, hears it: the window while other replicas may be live, else 0.
   */
  writeSettleMs(): number {
    return this.proof?.writeSettleMs() ?? 0;
  }

  private startSync(): Promise<boolean> {
    const client = this.client;
    if (!client || !this.listening) return Promise.resolve(false);
    const began = this.now();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer to a sync within ${SYNC_DEADLINE_MS} ms`)), SYNC_DEADLINE_MS);
    });
    const synced = Promise.race([client.query(''), deadline]).then(
      () => {
        if (client !== this.client || !this.listening) return false;
        this.proof?.noteAnswered(began);
        return true;
      },
      (err: unknown) => {
        this.lost(client, err as Error);
        return false;
      },
    ).finally(() => clearTimeout(timer));
    this.running = synced;
    void synced.then(() => { if (this.running === synced) this.running = undefined; });
    return synced;
  }

  /** What has been heard so far of `tables` (all when absent); undefined when kept reads may not be used. */
  stamp(tables?: readonly string[]): string | undefined {
    if (!this.live) return undefined;
    let changes = this.allChanges;
    if (tables) {
      changes = 0;
      for (const table of tables) changes += this.tableChanges.get(table) ?? 0;
    }
    return `kept:${this.epoch}:${changes}`;
  }

  /** The value of `key` as last read by `load`, if nothing it depends on changed since; else `load` again. */
  kept<T>(key: string, load: () => Promise<T>, options: KeptReadOptions = {}): Promise<T> {
    const stamp = this.stamp(options.tables);
    if (stamp === undefined) return load();
    const entry = this.entries.get(key);
    const now = this.now();
    if (entry && entry.stamp === stamp && (options.maxAgeMs === undefined || now - entry.at < options.maxAgeMs)) {
      return entry.value as Promise<T>;
    }
    const value = load();
    this.entries.delete(key);
    this.entries.set(key, { stamp, at: now, value });
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    value.catch(() => { if (this.entries.get(key)?.value === value) this.entries.delete(key); });
    return value;
  }

  /** A write through this process committed (or may have): nothing kept before is used again. */
  noteLocalWrite(): void {
    this.epoch++;
    this.entries.clear();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.listening = false;
    this.proof?.detach();
    this.unsubscribe?.();
    clearTimeout(this.reconnectTimer);
    this.entries.clear();
    await this.client?.end().catch(() => undefined);
  }

  private changed(table: string | undefined): void {
    this.allChanges++;
    if (table !== undefined) this.tableChanges.set(table, (this.tableChanges.get(table) ?? 0) + 1);
  }

  private async connect(): Promise<void> {
    // Named with the process id, so an operator (or a test) can tell which process a listening backend serves.
    const client = new pg.Client({ connectionString: this.url, keepAlive: true, application_name: `${LISTENER_NAME}-${process.pid}` });
    client.on('notification', (message) => {
      if (client !== this.client) return;
      this.changed(message.channel === TABLE_CHANGE_CHANNEL ? message.payload : undefined);
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    this.client = client;
    await client.connect();
    await client.query(`LISTEN ${TABLE_CHANGE_CHANNEL}`);
    if (this.stopped || this.client !== client) return;
    // Whatever was kept before may have missed writes made while nobody listened.
    this.epoch++;
    this.entries.clear();
    this.listening = true;
    this.proof?.attach(client);
  }

  private lost(client: pg.Client | undefined, err?: Error): void {
    if (this.stopped || (client !== undefined && this.client !== client)) return;
    this.listening = false;
    this.client = undefined;
    this.proof?.detach();
    this.entries.clear();
    if (err) this.logger?.warn({ err }, 'kept reads: listening connection lost; reading from the records until it is back');
    client?.end().catch(() => undefined);
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => {
      if (!this.stopped) this.connect().catch((error: unknown) => this.lost(this.client, error as Error));
    }, RECONNECT_MS);
    this.reconnectTimer.unref();
  }
}
