/**
 * Proof, kept up to date in the background, that this process has heard every write committed more than `windowMs`
 * ago, so that a request may use kept reads without a round trip of its own (events/kept-reads.ts).
 *
 * Every `pingMs` a ping (an empty query) goes out on the listening connection. PostgreSQL signals listeners at
 * commit and a backend delivers the notices it was told before it answers its next query, so a ping that was SENT
 * at time s and has been answered proves that every write committed before s has been heard. A request at time t
 * may use kept reads when the last answered ping was sent after t - windowMs: a write committed more than
 * `windowMs` before the request has then been heard.
 *
 * That makes writes of other replicas count within `windowMs`; to make them count at once, a write through a
 * replica answers only `windowMs` after its commit when other replicas are live (`writeSettleMs`): any request that
 * starts after that answer, on any replica, is one whose proof covers the commit. To know whether others are
 * live, every PEERS_EVERY_MS the ping asks which replicas hold their liveness lock (`peers`). A replica that others
 * may not know of yet (just started, or seen not live) uses no proof until it has been seen live for
 * PEER_GRACE_MS: every writer has asked again by then and waits for it.
 *
 * Pings are for requests: when none has asked for the proof for IDLE_AFTER_MS, only the peers question goes on
 * (an idle hub sends PostgreSQL a few queries a second, not a hundred); the next request then syncs once, and
 * pinging resumes.
 */
import type pg from 'pg';

/** A ping that is a comment: an empty query to PostgreSQL, told apart from a request's own sync in tests. */
export const PING_QUERY = '/* devicelab kept-reads ping */';
/**
 * No ping answered for this long and one on the wire: the connection is stalled, requests read the records rather
 * than queue a sync behind it. Shorter waits (a loaded machine) are bridged by a sync, which costs less than the records.
 */
const STALL_MS = 250;
/** A ping unanswered this long: the connection is taken for lost (and made again). */
const PING_DEADLINE_MS = 1000;
/** How often the live replicas are asked. */
const PEERS_EVERY_MS = 100;
/** A writer's knowledge of the live replicas counts this long after its question was sent; older, it waits. */
const PEERS_KNOWLEDGE_MS = 500;
/** No request has asked for the proof this long: pings pause (the peers question does not). */
const IDLE_AFTER_MS = 5_000;
/** Knowledge horizon plus the largest window (100 ms) plus a margin: see the file comment. */
const PEER_GRACE_MS = PEERS_KNOWLEDGE_MS + 100 + 100;

/** How to ask for the live replicas: a statement whose row says how many there are and whether this one is. */
export interface PeersQuery {
  text: string;
  values: unknown[];
}
interface PeersRow {
  live: number;
  me: boolean;
}

export class FreshnessProof {
  private client: pg.Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** When the last answered ping was sent (every write committed before it has been heard). */
  private provenAt = -Infinity;
  /** When pinging began on this connection. */
  private attachedAt = -Infinity;
  /** When the ping on the wire was sent; undefined when none is. */
  private pingSentAt: number | undefined;
  private lastPeersAt = -Infinity;
  private peersKnownAt = -Infinity;
  private othersLive = true;
  /** Since when (a question's sending) this replica has been seen live without a break. */
  private selfLiveSince: number | undefined;
  /** When a request last asked whether the proof holds. */
  private askedAt = -Infinity;

  constructor(
    readonly windowMs: number, private readonly peers: PeersQuery | undefined,
    private readonly onFailure: (client: pg.Client, err: Error) => void,
    private readonly now: () => number,
  ) {}

  /** Starts pinging on `client` (the listening connection, LISTEN confirmed). */
  attach(client: pg.Client): void {
    this.detach();
    this.client = client;
    this.attachedAt = this.now();
    this.askedAt = this.attachedAt;
    const every = Math.max(2, Math.floor(this.windowMs / 5));
    this.timer = setInterval(() => this.ping(), every);
    this.timer.unref();
    this.ping();
  }

  /** The connection is gone: nothing is proven until pings are answered on the next one. */
  detach(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.client = undefined;
    this.provenAt = -Infinity;
    this.pingSentAt = undefined;
    this.selfLiveSince = undefined;
  }

  /** Whether a request now may use kept reads without a sync of its own. */
  proven(): boolean {
    const now = this.now();
    this.askedAt = now;
    if (now - this.provenAt >= this.windowMs) return false;
    if (!this.peers) return true;
    return this.selfLiveSince !== undefined && now - this.selfLiveSince >= PEER_GRACE_MS;
  }

  /** A query sent at `sentAt` on the listening connection was answered (a request's own sync). */
  noteAnswered(sentAt: number): void {
    if (this.client) this.provenAt = Math.max(this.provenAt, sentAt);
  }

  /** No ping answered for STALL_MS and one on the wire: a sync would queue behind it. */
  stalled(): boolean {
    return this.pingSentAt !== undefined && this.now() - Math.max(this.provenAt, this.attachedAt) >= STALL_MS;
  }

  /**
   * How long a write through this replica, committed now, must wait before it answers: the window while other
   * replicas are (or may be) live, 0 when this replica is known to be the only one.
   */
  writeSettleMs(): number {
    if (this.peers && !this.othersLive && this.now() - this.peersKnownAt < PEERS_KNOWLEDGE_MS) return 0;
    return this.windowMs;
  }

  private ping(): void {
    const client = this.client;
    if (!client) return;
    if (this.pingSentAt !== undefined) {
      if (this.now() - this.pingSentAt > PING_DEADLINE_MS) {
        this.onFailure(client, new Error(`no answer to a ping within ${PING_DEADLINE_MS} ms`));
      }
      return;
    }
    const sentAt = this.now();
    const askPeers = this.peers !== undefined && sentAt - this.lastPeersAt >= PEERS_EVERY_MS;
    if (!askPeers && sentAt - this.askedAt >= IDLE_AFTER_MS) return;
    if (askPeers) this.lastPeersAt = sentAt;
    this.pingSentAt = sentAt;
    const answered = askPeers ? client.query<PeersRow>(this.peers!.text, this.peers!.values) : client.query(PING_QUERY);
    answered.then((result) => {
      if (client !== this.client) return;
      this.pingSentAt = undefined;
      this.provenAt = Math.max(this.provenAt, sentAt);
      if (askPeers) this.heardPeers(result.rows[0] as PeersRow | undefined, sentAt);
    }, (err: unknown) => {
      if (client !== this.client) return;
      this.pingSentAt = undefined;
      this.onFailure(client, err as Error);
    });
  }

  private heardPeers(row: PeersRow | undefined, sentAt: number): void {
    const me = row?.me === true;
    this.othersLive = (row?.live ?? 0) > (me ? 1 : 0);
    this.peersKnownAt = Math.max(this.peersKnownAt, sentAt);
    if (!me) this.selfLiveSince = undefined;
    else this.selfLiveSince ??= sentAt;
  }
}
