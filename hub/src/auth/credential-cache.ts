/**
 * Credentials verified against the records, kept while no write to the tables they were read from (users, roles,
 * user_roles) has been heard by any route (events/kept-reads.ts): a request whose login and token were verified
 * before, with nothing written to those tables since, is authenticated without a round trip to PostgreSQL. A
 * rotated token, a deactivated or deleted user and a changed role are writes to those tables, so they take effect
 * on every replica as soon as the replica hears the notice; while it cannot hear notices nothing is kept.
 *
 * Only successful verifications are kept, keyed by an HMAC (a random key of this process) of the login and token:
 * neither the token nor a plain hash of it is held, and a failed or unknown credential is always read again (and
 * throttled as before, http/basic-auth.ts).
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { KeptReads } from '../events/kept-reads';
import type { AuthenticatedUser } from './authenticated-user';
import type { CheckedUserRow } from './credential-reads';

export const CREDENTIAL_TABLES = ['users', 'roles', 'user_roles'] as const;
const MAX_ENTRIES = 10_000;

export interface KeptCredential {
  user: AuthenticatedUser;
  /** The user row as read (its last_seen_at decides whether this request is noted as a login). */
  row: CheckedUserRow;
}

export class CredentialCache {
  private readonly key = randomBytes(32);
  /** HMAC -> the verification and the stamp it was read under; Map order is insertion order, oldest first. */
  private readonly entries = new Map<string, KeptCredential & { stamp: string }>();

  constructor(private readonly reads: KeptReads) {}

  /** The stamp to read a credential under, taken before the read; undefined: nothing may be kept now. */
  stamp(): string | undefined {
    return this.reads.stamp(CREDENTIAL_TABLES);
  }

  find(login: string, token: string): KeptCredential | undefined {
    const stamp = this.stamp();
    if (stamp === undefined) return undefined;
    const digest = this.digest(login, token);
    const entry = this.entries.get(digest);
    if (entry === undefined) return undefined;
    if (entry.stamp === stamp) return entry;
    this.entries.delete(digest);
    return undefined;
  }

  remember(login: string, token: string, stamp: string | undefined, verified: KeptCredential): void {
    if (stamp === undefined) return;
    const digest = this.digest(login, token);
    this.entries.delete(digest);
    this.entries.set(digest, { ...verified, stamp });
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
  }

  /** Logins are case-insensitive; a NUL cannot occur in a Basic login, so the parts cannot run into each other. */
  private digest(login: string, token: string): string {
    return createHmac('sha256', this.key).update(`${login.toLowerCase()}\0${token}`).digest('base64');
  }
}
