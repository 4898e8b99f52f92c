/**
 * Throttling of failed logins without a lockout an attacker could aim at a real user (README, "Security").
 *
 * Failures are spent from token buckets ("failure budgets"): one per client address, one per login, and one per
 * trusted (client address, login) pair. A request is refused, before its credentials are checked, while a
 * budget it is subject to is empty:
 *  - an untrusted client is subject to its address's budget and to the login's budget;
 *  - a trusted client, one that authenticated successfully as that login from that address in the last
 *    TRUST_DAYS, is subject only to its pair's budget (the OWASP "trusted client" rule): a flood from other
 *    addresses, or from other users of the same address (NAT), does not keep a known client out.
 * An attempt reserves a failure from the budgets it is subject to before its credentials are checked, and a
 * success gives it back, so concurrent requests cannot all pass while the first ones are still being verified.
 * A trusted client's budget is as small as the others: trust does not let anyone guess faster.
 * Each map is an LRU of bounded size, and full buckets carry no information and are dropped, so spraying
 * logins or addresses cannot grow memory without bound.
 */
import net from 'node:net';

interface FailureLimit {
  /** Failures allowed at once. */
  burst: number;
  /** One more failure is allowed every this many ms. */
  refillMs: number;
}

interface LoginThrottleOptions {
  perAddress?: FailureLimit;
  perLogin?: FailureLimit;
  /** A trusted client's failures (e.g. one that keeps sending its old token after a rotation). */
  perTrustedClient?: FailureLimit;
  /** Most entries in each map. */
  maxEntries?: number;
  now?: () => number;
}

const DEFAULT_LIMIT: FailureLimit = { burst: 10, refillMs: 6_000 };
const DEFAULT_MAX_ENTRIES = 10_000;
const TRUST_DAYS = 7;
const TRUST_MS = TRUST_DAYS * 24 * 3600_000;

/** Token buckets of failures, keyed by a string, LRU-bounded. */
class FailureBudgets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly limit: FailureLimit, private readonly maxEntries: number, private readonly now: () => number) {}

  /** ms until `key` may fail again; 0 when it may now. */
  waitMs(key: string): number {
    const bucket = this.refilled(key);
    if (!bucket) return 0;
    this.touch(key, bucket); // an attacker still knocking keeps its entry from being evicted
    return bucket.tokens >= 1 ? 0 : Math.ceil((1 - bucket.tokens) * this.limit.refillMs);
  }

  /** Takes one failure from `key`'s budget (callers check waitMs first, so there is one). */
  spend(key: string): void {
    const bucket = this.refilled(key) ?? { tokens: this.limit.burst, at: this.now() };
    bucket.tokens = Math.max(0, bucket.tokens - 1);
    this.touch(key, bucket);
  }

  /** Gives back a failure `spend` took. */
  giveBack(key: string): void {
    const bucket = this.refilled(key);
    if (bucket) bucket.tokens = Math.min(this.limit.burst, bucket.tokens + 1);
  }

  get size(): number {
    return this.buckets.size;
  }

  private refilled(key: string): { tokens: number; at: number } | undefined {
    const bucket = this.buckets.get(key);
    if (!bucket) return undefined;
    const now = this.now();
    bucket.tokens = Math.min(this.limit.burst, bucket.tokens + (now - bucket.at) / this.limit.refillMs);
    bucket.at = now;
    if (bucket.tokens >= this.limit.burst) {
      this.buckets.delete(key);
      return undefined;
    }
    return bucket;
  }

  private touch(key: string, bucket: { tokens: number; at: number }): void {
    this.buckets.delete(key);
    this.buckets.set(key, bucket);
    evictOldest(this.buckets, this.maxEntries);
  }
}

interface LoginAttempt {
  /** ms to wait before trying again; 0 when the credentials may be checked now. */
  waitMs: number;
  /** The credentials were right: the reserved failure is given back, and this client is trusted with this login. */
  succeeded(): void;
  /** The credentials could not be checked (the records store is away): the reserved failure is given back. */
  unchecked(): void;
}

export class LoginThrottle {
  private readonly addresses: FailureBudgets;
  private readonly logins: FailureBudgets;
  private readonly pairs: FailureBudgets;
  /** pair key -> when its trust ends (ms). */
  private readonly trusted = new Map<string, number>();
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(options: LoginThrottleOptions = {}) {
    this.now = options.now ?? Date.now;
    this.maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
    this.addresses = new FailureBudgets(options.perAddress ?? DEFAULT_LIMIT, this.maxEntries, this.now);
    this.logins = new FailureBudgets(options.perLogin ?? DEFAULT_LIMIT, this.maxEntries, this.now);
    this.pairs = new FailureBudgets(options.perTrustedClient ?? DEFAULT_LIMIT, this.maxEntries, this.now);
  }

  /**
   * Starts a login attempt. `login` is undefined when the credentials were too malformed to name one. When
   * `waitMs` is above 0 the client must wait that long and its credentials are not to be looked at; otherwise
   * a failure is reserved, and stays spent unless `succeeded()` is called.
   */
  begin(clientAddress: string, login: string | undefined): LoginAttempt {
    const address = addressKey(clientAddress);
    const pair = login === undefined ? undefined : pairKey(address, login);
    const budgets: [FailureBudgets, string][] = pair !== undefined && this.isTrusted(pair)
      ? [[this.pairs, pair]]
      : [[this.addresses, address], ...(login === undefined ? [] : [[this.logins, loginKey(login)] as [FailureBudgets, string]])];
    const waitMs = Math.max(...budgets.map(([budget, key]) => budget.waitMs(key)));
    if (waitMs > 0) return { waitMs, succeeded: () => undefined, unchecked: () => undefined };

    for (const [budget, key] of budgets) budget.spend(key);
    const giveBack = () => { for (const [budget, key] of budgets) budget.giveBack(key); };
    return {
      waitMs: 0,
      unchecked: giveBack,
      succeeded: () => {
        giveBack();
        if (pair === undefined) return;
        this.trusted.delete(pair);
        this.trusted.set(pair, this.now() + TRUST_MS);
        evictOldest(this.trusted, this.maxEntries);
      },
    };
  }

  /** Entries held, for the memory bound's test. */
  get size(): number {
    return this.addresses.size + this.logins.size + this.pairs.size + this.trusted.size;
  }

  private isTrusted(pair: string): boolean {
    const until = this.trusted.get(pair);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.trusted.delete(pair);
    return false;
  }
}

function evictOldest(map: Map<string, unknown>, maxEntries: number): void {
  while (map.size > maxEntries) map.delete(map.keys().next().value as string);
}

const loginKey = (login: string): string => login.toLowerCase(); // logins are matched case-insensitively
const pairKey = (address: string, login: string): string => `${address} ${loginKey(login)}`;

/**
 * The unit a client address is limited by: an IPv4 address (also when written IPv4-mapped, `::ffff:a.b.c.d`),
 * or an IPv6 address's /64 network, since one host commonly holds a whole /64 and could rotate through it.
 */
export function addressKey(address: string): string {
  const bare = address.replace(/%.*$/, ''); // zone id (fe80::1%eth0)
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped) return mapped[1];
  if (!net.isIPv6(bare)) return bare;
  return `${expandIPv6(bare).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, as hex without leading zeros. */
function expandIPv6(address: string): string[] {
  let text = address.toLowerCase();
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number);
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array<string>(8 - headGroups.length - tailGroups.length).fill('0');
  return [...headGroups, ...zeros, ...tailGroups].map((group) => Number.parseInt(group, 16).toString(16));
}
