/**
 * Which replica owns a gateway's link: the one holding the gateway's advisory lock, on a connection of its own
 * per gateway (so the lock goes with the link: when the link ends the connection is closed, when the process dies
 * PostgreSQL drops it at once). A newer connection of the same gateway to this replica shares the held lock
 * (sessions are counted), so a gateway reconnecting to its own replica is never refused. When the lock's
 * connection breaks (PostgreSQL restarted) the lock is taken again on a new one and the gateway's inventory is
 * recorded afresh; the link ends only when another replica took the lock meanwhile.
 */
import pg from 'pg';
import type { Logger } from '@devicelab/shared';
import { sqlStateOf } from '../store/database';
import { LockKind } from './advisory-locks';

/** How long a link waits for the lock: covers the leader's brief sweep and a dying session's last writes. */
const LOCK_WAIT_MS = 1_500;
const LOCK_NOT_AVAILABLE = '55P03';
/** How often a lost lock is tried again while PostgreSQL is away. */
const RELOCK_RETRY_MS = 500;

interface HeldLink { users: number; client: Promise<pg.Client | undefined> }

export class LinkOwnership {
  private readonly held = new Map<string, HeldLink>();

  /**
   * `onLost`: the link is no longer owned (another replica took its lock while the connection was broken): it must
   * end. `onRelocked`: the lock was taken again after its connection broke: record the gateway's inventory afresh
   * (the lab's leader may have taken it Offline in the meantime).
   */
  constructor(
    private readonly url: string, private readonly logger: Logger,
    private readonly onLost: (gatewayId: string) => void, private readonly onRelocked: (gatewayId: string) => void,
  ) {}

  /** Takes (or shares) the gateway's link lock; false when another replica's live link holds it. */
  async acquire(gatewayId: string): Promise<boolean> {
    let entry = this.held.get(gatewayId);
    if (!entry) {
      entry = { users: 0, client: this.lock(gatewayId) };
      this.held.set(gatewayId, entry);
    }
    entry.users += 1;
    const client = await entry.client;
    if (!client) {
      entry.users -= 1;
      if (this.held.get(gatewayId) === entry) this.held.delete(gatewayId);
      return false;
    }
    return true;
  }

  /** One session of the gateway ended; the last one closes the connection, which frees the lock. */
  release(gatewayId: string): void {
    const entry = this.held.get(gatewayId);
    if (!entry) return;
    entry.users -= 1;
    if (entry.users > 0) return;
    this.held.delete(gatewayId);
    void entry.client.then((client) => client?.end().catch(() => undefined));
  }

  get heldCount(): number {
    return this.held.size;
  }

  async stop(): Promise<void> {
    const entries = [...this.held.values()];
    this.held.clear();
    await Promise.all(entries.map(async (entry) => (await entry.client)?.end().catch(() => undefined)));
  }

  private async lock(gatewayId: string): Promise<pg.Client | undefined> {
    const client = new pg.Client({ connectionString: this.url });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query(`SET lock_timeout = ${LOCK_WAIT_MS}`);
      await client.query('SELECT pg_advisory_lock($1, hashtext($2) & 2147483647)', [LockKind.gatewayLink, gatewayId]);
    } catch (err) {
      await client.end().catch(() => undefined);
      if (sqlStateOf(err) === LOCK_NOT_AVAILABLE) return undefined;
      throw err;
    }
    client.on('end', () => {
      const entry = this.held.get(gatewayId);
      if (!entry) return;
      void entry.client.then((held) => {
        if (held !== client || this.held.get(gatewayId) !== entry) return;
        this.logger.warn({ gatewayId }, 'link lock connection lost; taking the lock again');
        void this.relock(gatewayId, entry);
      });
    });
    return client;
  }

  private async relock(gatewayId: string, entry: HeldLink): Promise<void> {
    while (this.held.get(gatewayId) === entry) {
      let client: pg.Client | undefined;
      try {
        client = await this.lock(gatewayId);
      } catch {
        await new Promise((resolve) => setTimeout(resolve, RELOCK_RETRY_MS));
        continue; // PostgreSQL is still away
      }
      if (this.held.get(gatewayId) !== entry) {
        await client?.end().catch(() => undefined); // the link ended meanwhile
        return;
      }
      if (!client) {
        this.held.delete(gatewayId);
        this.logger.warn({ gatewayId }, 'another replica took the link lock; ending the link');
        this.onLost(gatewayId);
        return;
      }
      entry.client = Promise.resolve(client);
      this.onRelocked(gatewayId);
      return;
    }
  }
}
