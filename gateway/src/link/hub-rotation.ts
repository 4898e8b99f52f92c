/**
 * Which hub replica the gateway dials next, and after how long (`DEVICELAB_HUB=a:7443,b:7443`). Every
 * attempt that ends without a verified session, and every lost session, moves on to the next address, round-robin.
 * Within a round (until every address was tried once since the last session) the next attempt starts at once, so a
 * gateway whose replica died is on another one within a round trip; after a whole round failed it waits with the
 * exponential backoff. A round in which a replica refused the link because another replica still owns it (that
 * owner's session is ending) waits only `ownerBusyMs`: the link will be free in a moment. Rounds refused like that one
 * after another wait twice as long each time, up to the backoff's maximum: the owner is then a live link of another
 * process with this gateway's name and token, which a retry every `ownerBusyMs` would only hammer.
 */
import { Backoff, DEFAULT_BACKOFF, type BackoffOptions } from './backoff';

/** How an attempt ended: a verified session was lost, it never became one, or the replica said another owns it. */
export type AttemptOutcome = 'lost' | 'failed' | 'ownerBusy';

export const OWNER_BUSY_RETRY_MS = 300;

export class HubRotation {
  private index = 0;
  private triedInRound = 0;
  private ownerBusyInRound = false;
  /** Rounds in a row in which a replica said another link owns this gateway. */
  private ownerBusyRounds = 0;
  private readonly backoff: Backoff;
  private readonly maxDelayMs: number;

  constructor(
    readonly addresses: readonly string[],
    backoff: BackoffOptions = DEFAULT_BACKOFF,
    private readonly ownerBusyMs = OWNER_BUSY_RETRY_MS,
    random = Math.random,
  ) {
    if (addresses.length === 0) throw new Error('at least one hub address is needed');
    this.backoff = new Backoff(backoff, random);
    this.maxDelayMs = backoff.maxMs;
  }

  /** The address the current (or next) attempt dials. */
  get current(): string {
    return this.addresses[this.index];
  }

  /** A session was verified on the current address: the next loss starts a fresh round. */
  connected(): void {
    this.triedInRound = 0;
    this.ownerBusyInRound = false;
    this.ownerBusyRounds = 0;
    this.backoff.reset();
  }

  /** Moves to the next address; returns how long to wait before dialling it. */
  next(outcome: AttemptOutcome): number {
    this.index = (this.index + 1) % this.addresses.length;
    this.triedInRound++;
    if (outcome === 'ownerBusy') this.ownerBusyInRound = true;
    if (this.triedInRound < this.addresses.length) return 0;
    const ownerBusy = this.ownerBusyInRound;
    this.triedInRound = 0;
    this.ownerBusyInRound = false;
    this.ownerBusyRounds = ownerBusy ? this.ownerBusyRounds + 1 : 0;
    return ownerBusy ? Math.min(this.ownerBusyMs * 2 ** (this.ownerBusyRounds - 1), this.maxDelayMs) : this.backoff.next();
  }
}

/** `a:7443, b:7443` (DEVICELAB_HUB) as addresses; empty entries are ignored, duplicates kept once. */
export function parseHubAddresses(text: string): string[] {
  return [...new Set(text.split(',').map((part) => part.trim()).filter(Boolean))];
}
