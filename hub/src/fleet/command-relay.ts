/**
 * Commands between replicas through PostgreSQL. The requester writes the command as a `relayed_commands` row and
 * wakes the owner of the gateway's link with a NOTIFY; the owner claims the row, runs the command on its link with
 * what is left of the deadline, writes the answer into the row and wakes the requester, which reads and deletes
 * it. The requester gives up at the same deadline as a local command, and at once when the owner replica dies
 * (its liveness lock is gone); rows whose requester died are deleted by the lab's leader after their deadline.
 * Changes every gateway must hear (retains, metrics settings) are NOTIFY-only broadcasts.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Logger } from '@devicelab/shared';
import { GatewayUnavailableError } from '../gateways/gateway-directory';
import { withTx, type Db } from '../store/database';
import { isReplicaLive, RELAY_CHANNEL, type ReplicaRegistry } from './replica-registry';

export type RelayKind = 'command' | 'usbHubCommand' | 'accessPort';

/** Runs a relayed command on this replica's links (the owner's side). */
export type RelayExecutor = (kind: RelayKind, target: string, request: unknown, timeoutMs: number) => Promise<unknown>;

/** Broadcasts every replica acts on for its own links. */
export interface RelayBroadcasts {
  retention(vendorUniqueIdentifier: string): void;
  metricsSettings(): void;
}

type Notice =
  | { type: 'request' | 'answer'; to: string; id: string }
  | { type: 'retention'; from: string; vendorUniqueIdentifier: string }
  | { type: 'metricsSettings'; from: string };

type Answer = { ok: true; value: unknown } | { ok: false; unavailable: boolean; message: string };

interface Waiter { owner: string; resolve(value: unknown): void; reject(err: Error): void; timer: NodeJS.Timeout }

/** How often a requester with commands in flight checks that their owners are still live. */
const OWNER_CHECK_MS = 500;

export class CommandRelay {
  private readonly waiting = new Map<string, Waiter>();
  private ownerCheck: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly db: Db,
    registry: Pick<ReplicaRegistry, 'onRelayNotification' | 'replica'>,
    private readonly execute: RelayExecutor,
    private readonly broadcasts: RelayBroadcasts,
    private readonly logger: Logger,
  ) {
    this.replicaId = registry.replica.id;
    registry.onRelayNotification((payload) => this.onNotice(payload));
  }

  /** The `from` of this replica's notices (retain_device and release_device send theirs with it: store/routines/device-retain.ts). */
  readonly replicaId: string;

  /** Runs `request` on the replica `owner` and resolves with its result; rejects like a local command would. */
  request(owner: string, kind: RelayKind, target: string, request: unknown, timeoutMs: number): Promise<unknown> {
    if (this.stopped) return Promise.reject(new GatewayUnavailableError('hub stopping'));
    const id = randomUUID();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.settle(id, { ok: false, unavailable: true,
        message: `Hub replica ${owner}, which holds the gateway's link, did not answer within ${timeoutMs} ms.` }), timeoutMs);
      this.waiting.set(id, { owner, resolve, reject, timer });
      this.ownerCheck ??= setInterval(() => void this.checkOwners(), OWNER_CHECK_MS);
      withTx(this.db, async (trx) => {
        await trx.insertInto('relayed_commands').values({
          id, owner_replica: owner, requester_replica: this.replicaId, kind, target,
          request: encode(request), deadline: new Date(Date.now() + timeoutMs),
        }).execute();
        await notify(trx, { type: 'request', to: owner, id });
      }).catch((err: unknown) => this.fail(id, err instanceof Error ? err : new Error(String(err))));
    });
  }

  broadcast(notice: { type: 'retention'; vendorUniqueIdentifier: string } | { type: 'metricsSettings' }): void {
    void notify(this.db, { ...notice, from: this.replicaId })
      .catch((err: unknown) => this.logger.warn({ err }, 'relay broadcast failed'));
  }

  /** Commands in flight (their rows exist until answered or timed out). */
  get pending(): number {
    return this.waiting.size;
  }

  stop(): void {
    this.stopped = true;
    for (const id of [...this.waiting.keys()]) this.settle(id, { ok: false, unavailable: true, message: 'hub stopping' });
  }

  private onNotice(payload: string): void {
    let notice: Notice;
    try {
      notice = JSON.parse(payload) as Notice;
    } catch {
      return;
    }
    if (notice.type === 'retention' && notice.from !== this.replicaId) this.broadcasts.retention(notice.vendorUniqueIdentifier);
    else if (notice.type === 'metricsSettings' && notice.from !== this.replicaId) this.broadcasts.metricsSettings();
    else if (notice.type === 'request' && notice.to === this.replicaId) void this.serve(notice.id);
    else if (notice.type === 'answer' && notice.to === this.replicaId) void this.collect(notice.id);
  }

  /** The owner's side: claim, run, answer. */
  private async serve(id: string): Promise<void> {
    try {
      const row = await this.db.updateTable('relayed_commands').set({ claimed_at: sql`now()` })
        .where('id', '=', id).where('owner_replica', '=', this.replicaId).where('claimed_at', 'is', null)
        .returning(['kind', 'target', sql<string>`request::text`.as('request'), 'deadline', 'requester_replica'])
        .executeTakeFirst();
      if (!row) return;
      const remainingMs = new Date(row.deadline).getTime() - Date.now();
      if (remainingMs <= 0) return; // the requester has given up already
      let answer: Answer;
      try {
        answer = { ok: true, value: await this.execute(row.kind as RelayKind, row.target, decode(row.request), remainingMs) };
      } catch (err) {
        answer = { ok: false, unavailable: err instanceof GatewayUnavailableError, message: (err as Error).message };
      }
      await withTx(this.db, async (trx) => {
        const answered = await trx.updateTable('relayed_commands').set({ answer: encode(answer) })
          .where('id', '=', id).returning('id').executeTakeFirst();
        if (answered) await notify(trx, { type: 'answer', to: row.requester_replica, id });
      });
    } catch (err) {
      this.logger.warn({ err, id }, 'could not serve a relayed command');
    }
  }

  /** The requester's side: read the answer and delete the row. */
  private async collect(id: string): Promise<void> {
    if (!this.waiting.has(id)) return;
    try {
      const row = await this.db.selectFrom('relayed_commands').select(sql<string>`answer::text`.as('answer'))
        .where('id', '=', id).executeTakeFirst();
      if (row?.answer) this.settle(id, decode(row.answer) as Answer);
    } catch (err) {
      this.fail(id, err as Error);
    }
  }

  private async checkOwners(): Promise<void> {
    const owners = new Set([...this.waiting.values()].map((w) => w.owner));
    for (const owner of owners) {
      const live = await isReplicaLive(this.db, owner).catch(() => true); // unknown: leave it to the deadline
      if (live) continue;
      for (const [id, waiter] of [...this.waiting]) {
        if (waiter.owner === owner) {
          this.settle(id, { ok: false, unavailable: true, message: `Hub replica ${owner}, which held the gateway's link, is gone.` });
        }
      }
    }
  }

  private settle(id: string, answer: Answer): void {
    const waiter = this.take(id);
    if (!waiter) return;
    if (answer.ok) waiter.resolve(answer.value);
    else waiter.reject(answer.unavailable ? new GatewayUnavailableError(answer.message) : new Error(answer.message));
  }

  private fail(id: string, err: Error): void {
    this.take(id)?.reject(err);
  }

  private take(id: string): Waiter | undefined {
    const waiter = this.waiting.get(id);
    if (!waiter) return undefined;
    this.waiting.delete(id);
    clearTimeout(waiter.timer);
    if (this.waiting.size === 0) {
      clearInterval(this.ownerCheck);
      this.ownerCheck = undefined;
    }
    void this.db.deleteFrom('relayed_commands').where('id', '=', id).execute().catch(() => undefined);
    return waiter;
  }
}

async function notify(db: Db | Parameters<Parameters<typeof withTx>[1]>[0], notice: Notice): Promise<void> {
  await sql`SELECT pg_notify(${RELAY_CHANNEL}, ${JSON.stringify(notice)})`.execute(db);
}

/** JSON with Buffers (proto bytes fields) as `{ $base64 }`. */
function encode(value: unknown): string {
  return JSON.stringify(value, function replacer(this: Record<string, unknown>, key, raw) {
    const original = this[key];
    return Buffer.isBuffer(original) ? { $base64: original.toString('base64') } : raw;
  });
}

function decode(text: string): unknown {
  return JSON.parse(text, (_key, value: unknown) => {
    const encoded = (value as { $base64?: unknown } | null)?.$base64;
    return typeof encoded === 'string' ? Buffer.from(encoded, 'base64') : value;
  });
}
