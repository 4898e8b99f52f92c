/**
 * The session map as every relayed command reads it: a session read from PostgreSQL (session-map.ts) is kept in
 * memory while nothing it is made of has been written since (the session rows, the devices, the users), under the
 * same rule as every kept read of the hub (events/kept-reads.ts): a request first proves it has heard every write
 * committed before it (the shared sync), then a session kept under the stamp of what has been heard is used without
 * a round trip. A session ended, its device released, unplugged or deleted, by this replica or another one, is such a
 * write, so the next command reads the records again and is refused. A session this replica begins to end is also
 * dropped at once, without waiting for its change notice (which a request may skip under an allowed lag).
 *
 * Only open sessions are kept, and only those found: a command naming an unknown session reads the records each time,
 * so made-up session ids never fill the memory.
 */
import type { Db } from '../../store/database';
import { findLiveSession, type LiveSession } from './session-map';

/** What a kept session is read from: a write to any of them drops it. */
export const SESSION_TABLES = ['automation_sessions', 'devices', 'users'] as const;
/** One per open session of the lab at most; a bound all the same. */
const MAX_ENTRIES = 10_000;

/** What has been heard of a set of tables (events/kept-reads.ts); undefined while nothing may be kept. */
export interface ChangeStamps {
  stamp(tables?: readonly string[]): string | undefined;
}

export class KeptSessions {
  /** Session id -> the session as read, and the stamp it was read under; Map order is insertion order, oldest first. */
  private readonly entries = new Map<string, { stamp: string; session: Readonly<LiveSession> }>();
  /** Bumped by `forget`: a read that began before is not kept (it may have seen the session before it was ended). */
  private forgotten = 0;

  /** `stamps` undefined: nothing is kept, every command reads the records. */
  constructor(private readonly db: Db, private readonly stamps?: ChangeStamps) {}

  /**
   * The open or closing session with this id. `heard`: every write committed before this request has been heard
   * (the request's sync succeeded), so a kept session may be used; otherwise the records are read.
   */
  async find(sessionId: string, heard: boolean): Promise<Readonly<LiveSession> | undefined> {
    const stamp = heard ? this.stamps?.stamp(SESSION_TABLES) : undefined;
    if (stamp === undefined) return findLiveSession(this.db, sessionId);
    const entry = this.entries.get(sessionId);
    if (entry?.stamp === stamp) return entry.session;
    // The stamp is taken before the read: a write heard while it runs changes the stamp, so the value is not used again.
    const forgotten = this.forgotten;
    const session = await findLiveSession(this.db, sessionId);
    if (session?.state === 'open' && forgotten === this.forgotten) {
      this.entries.delete(sessionId);
      this.entries.set(sessionId, { stamp, session: Object.freeze(session) });
      if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    } else {
      this.entries.delete(sessionId);
    }
    return session;
  }

  /** The session is being ended here: its next command reads the records (and finds it closing or closed). */
  forget(sessionId: string): void {
    this.forgotten++;
    this.entries.delete(sessionId);
  }
}
