/**
 * Dashboard sessions verified against the records, kept while no write to the tables they were read from
 * (web_sessions, users, roles, user_roles) has been heard (events/kept-reads.ts), and never past their expiry: a
 * signed-out session (its row deleted), a deactivated user or a changed role count on every replica as soon as it
 * hears the notice. Keyed by an HMAC (a random key of this process) of the cookie; only live sessions are kept.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { KeptReads } from '../events/kept-reads';
import type { AuthenticatedUser } from './authenticated-user';
import { CREDENTIAL_TABLES } from './credential-cache';

export const SESSION_TABLES = ['web_sessions', ...CREDENTIAL_TABLES] as const;
const MAX_ENTRIES = 10_000;

export interface KeptSession {
  user: AuthenticatedUser;
  expiresAt: Date;
}

export class SessionCache {
  private readonly key = randomBytes(32);
  /** HMAC -> the session and the stamp it was read under; Map order is insertion order, oldest first. */
  private readonly entries = new Map<string, KeptSession & { stamp: string }>();

  constructor(private readonly reads: KeptReads) {}

  /** The stamp to read a session under, taken before the read; undefined: nothing may be kept now. */
  stamp(): string | undefined {
    return this.reads.stamp(SESSION_TABLES);
  }

  find(cookie: string, now = Date.now()): KeptSession | undefined {
    const stamp = this.stamp();
    if (stamp === undefined) return undefined;
    const digest = this.digest(cookie);
    const entry = this.entries.get(digest);
    if (entry === undefined) return undefined;
    if (entry.stamp === stamp && entry.expiresAt.getTime() > now) return entry;
    this.entries.delete(digest);
    return undefined;
  }

  remember(cookie: string, stamp: string | undefined, session: KeptSession): void {
    if (stamp === undefined) return;
    const digest = this.digest(cookie);
    this.entries.delete(digest);
    this.entries.set(digest, { ...session, stamp });
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
  }

  private digest(cookie: string): string {
    return createHmac('sha256', this.key).update(cookie).digest('base64');
  }
}
