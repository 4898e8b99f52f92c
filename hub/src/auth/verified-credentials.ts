/**
 * Credentials this hub verified recently, per client address (address + login + token, kept only as a SHA-256),
 * so that a client that keeps authenticating with the same good credentials is not made to reserve a failed
 * login before every check
 * (login-throttle.ts): with many concurrent requests those reservations alone emptied the budget and refused
 * good clients with 429. Per address, so that a client never seen with this login is still held off while the
 * login is under attack (the throttle's trusted-client rule). It decides nothing else: every request is still checked against the records store,
 * so a rotated token, a disabled or deleted user fails at once, on every hub replica. A failed check forgets
 * the entry; entries expire after a while and the map is bounded.
 */
import { createHash } from 'node:crypto';

const DEFAULT_TTL_MS = 60_000;
const DEFAULT_MAX_ENTRIES = 10_000;

export class VerifiedCredentials {
  /** digest -> when it expires (ms); Map order is insertion order, oldest first. */
  private readonly entries = new Map<string, number>();

  constructor(private readonly ttlMs = DEFAULT_TTL_MS, private readonly maxEntries = DEFAULT_MAX_ENTRIES,
    private readonly now: () => number = Date.now) {}

  has(clientAddress: string, login: string, token: string): boolean {
    const key = digest(clientAddress, login, token);
    const until = this.entries.get(key);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.entries.delete(key);
    return false;
  }

  remember(clientAddress: string, login: string, token: string): void {
    const key = digest(clientAddress, login, token);
    this.entries.delete(key);
    this.entries.set(key, this.now() + this.ttlMs);
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries) break;
      this.entries.delete(oldest);
    }
  }

  forget(clientAddress: string, login: string, token: string): void {
    this.entries.delete(digest(clientAddress, login, token));
  }

  get size(): number {
    return this.entries.size;
  }
}

/** Logins are case-insensitive; the parts as a JSON array cannot run into each other. */
const digest = (clientAddress: string, login: string, token: string): string =>
  createHash('sha256').update(JSON.stringify([clientAddress, login.toLowerCase(), token])).digest('base64');
