/**
 * HTTP Basic authentication for the REST API: login + API token on every request, read strictly
 * (basic-credentials.ts), with failed logins throttled (login-throttle.ts) and logged without the token.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { createLogger, type Logger } from '@devicelab/shared';
import { prettyRequested } from './params';
import { writeFailure } from './respond';
import type { Db } from '../store/database';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { parseBasicCredentials } from '../auth/basic-credentials';
import { LoginThrottle } from '../auth/login-throttle';
import { checkCredentials } from '../auth/users';
import { seenRecently } from '../auth/login-tracking';
import { VerifiedCredentials } from '../auth/verified-credentials';
import { CredentialReads } from '../auth/credential-reads';
import { CredentialCache } from '../auth/credential-cache';
import type { KeptReads } from '../events/kept-reads';
import type { ListStamps } from '../domain/device-list-cache';

declare global {
  namespace Express {
    interface Request {
      /** Set by basicAuthMiddleware. */
      user?: AuthenticatedUser;
      /** The device lists' change stamps, read with the credentials (basicAuthMiddleware, for device list requests). */
      listStamps?: ListStamps;
      /** Every write committed before this request has been heard (events/kept-reads.ts): kept reads may be used. */
      keptReads?: boolean;
    }
  }
}

const BASIC_REALM = 'DeviceLab';
const WWW_AUTHENTICATE = `Basic realm="${BASIC_REALM}"`;
/** Exact body of every 401, compact: clients compare it. */
export const AUTHENTICATION_REQUIRED_BODY = '{"isSuccess":false,"errorMessage":"Authentication required."}';
/** Logins are client text: a log line keeps at most this much of one. */
const LOGGED_LOGIN_CHARS = 200;

export interface BasicAuthOptions {
  logger?: Logger;
  throttle?: LoginThrottle;
  verified?: VerifiedCredentials;
  /** Reads kept between writes: verified credentials and the device lists' stamps without a round trip. */
  kept?: KeptReads;
}

/**
 * Guards every route mounted after it. Missing, malformed or wrong credentials, and inactive users, all get
 * the same 401. A client over its failure budget gets 429 with Retry-After before its credentials are looked
 * at. A request without credentials is no failed login (clients that wait for the challenge send one first).
 * Store failures go to the error handler (next(err)), not to a misleading 401. The user rows are read in batches
 * shared by the requests waiting at the same moment (auth/credential-reads.ts), with the device lists' change
 * stamps when the request lists devices, so that such a request makes one round trip to PostgreSQL in all; with
 * kept reads (events/kept-reads.ts) live, credentials verified before and unchanged since need none.
 */
export function basicAuthMiddleware(db: Db, options: BasicAuthOptions = {}): RequestHandler & { knownNow: KnownNow } {
  const check = credentialChecker(db, options);
  const middleware = (req: Request, res: Response, next: NextFunction) => {
    const header = req.headers.authorization;
    if (header === undefined) return sendAuthenticationRequired(res, prettyRequested(req));
    const clientAddress = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    check(clientAddress, parseBasicCredentials(header), readsDeviceList(req)).then((outcome) => {
      if (outcome.kind === 'throttled') return sendTooManyFailures(res, outcome.waitMs, prettyRequested(req));
      if (outcome.kind === 'refused') return sendAuthenticationRequired(res, prettyRequested(req));
      req.user = outcome.user;
      req.listStamps = outcome.listStamps;
      req.keptReads = outcome.keptReads;
      next();
    }, next);
  };
  return Object.assign(middleware, {
    knownNow: (req: Request, heard: boolean) => {
      const header = req.headers.authorization;
      return header === undefined ? undefined : check.knownNow(req.ip ?? req.socket.remoteAddress ?? 'unknown', header, heard);
    },
  });
}

/**
 * The user of a request's credentials when the full check would accept them with no throttle, read or write on the
 * way: verified for this client a moment ago and unchanged since (kept: no write to the credential tables heard),
 * with nothing to note about the login. `heard`: every write committed before the request has been heard
 * (KeptReads.provenNow or sync); without it, `unheard` stands for "ask again once heard". Undefined: check the full way.
 */
export type KnownNow = (req: Request, heard: boolean) => AuthenticatedUser | 'unheard' | undefined;

/** What a credential check decides; `throttled`: refused before looking, the client is over its failure budget. */
export type CredentialOutcome =
  | { kind: 'accepted'; user: AuthenticatedUser; listStamps?: ListStamps; keptReads: boolean }
  | { kind: 'refused' }
  | { kind: 'throttled'; waitMs: number };

/**
 * Login + token checked as Basic auth checks them, throttle and all: for Basic auth, and for credentials that come
 * another way (the WebDriver endpoint's `deviceConnectUserName` + `deviceConnectApiKey` capabilities). Rejects
 * only when the store fails.
 */
export function credentialChecker(db: Db, options: BasicAuthOptions = {}) {
  const logger = options.logger ?? createLogger('hub');
  const throttle = options.throttle ?? new LoginThrottle();
  const verified = options.verified ?? new VerifiedCredentials();
  const reads = new CredentialReads(db);
  const cache = options.kept ? new CredentialCache(options.kept) : undefined;

  /** `heard`: the request's sync when it started one already (a second would wait for another round trip). */
  const check = async (
    clientAddress: string, credentials: ReturnType<typeof parseBasicCredentials>, withListStamps = false, heard?: Promise<boolean>,
  ): Promise<CredentialOutcome> => {
    const login = credentials.login;
    const fail = (reason: string): CredentialOutcome => {
      logger.warn({ login: login?.slice(0, LOGGED_LOGIN_CHARS), clientAddress, reason }, 'authentication failed');
      return { kind: 'refused' };
    };
    if (credentials.kind === 'malformed') {
      const attempt = throttle.begin(clientAddress, login);
      if (attempt.waitMs > 0) return { kind: 'throttled', waitMs: attempt.waitMs };
      return fail(`malformed credentials: ${credentials.reason}`);
    }
    // Credentials this client verified a moment ago are checked without reserving a failed login first; should the check
    // fail now (token rotated, user disabled), the failure is counted as any other.
    const known = verified.has(clientAddress, credentials.login, credentials.token);
    const attempt = known ? undefined : throttle.begin(clientAddress, login);
    if (attempt && attempt.waitMs > 0) return { kind: 'throttled', waitMs: attempt.waitMs };
    let check: Awaited<ReturnType<typeof checkCredentials>>;
    let keptReads = false;
    let keptStamps: ListStamps | undefined;
    try {
      // With kept reads live, every write committed before this request has been heard: what has been heard so far
      // stands for the lists' stamps (taken before any read), and kept credentials may be used.
      keptReads = options.kept ? await (heard ?? options.kept.sync()) : false;
      keptStamps = keptReads && withListStamps ? options.kept!.stamp() : undefined;
      check = await checkCredentials(db, credentials.login, credentials.token, {
        reads, withListStamps: withListStamps && keptStamps === undefined, cache: keptReads ? cache : undefined,
      });
    } catch (err) {
      attempt?.unchecked(); // no failed login: clients retrying through an outage are not throttled after it
      throw err;
    }
    if ('failure' in check) {
      if (known) {
        verified.forget(clientAddress, credentials.login, credentials.token);
        throttle.begin(clientAddress, login); // spends a failure (or finds the budget empty already)
      }
      return fail(check.failure);
    }
    attempt?.succeeded();
    verified.remember(clientAddress, credentials.login, credentials.token);
    return { kind: 'accepted', user: check.user, listStamps: keptStamps ?? check.listStamps, keptReads };
  };
  /** What `check` would accept at once (see KnownNow). */
  const knownNow = (clientAddress: string, header: string, heard: boolean): AuthenticatedUser | 'unheard' | undefined => {
    if (!cache) return undefined;
    const credentials = parseBasicCredentials(header);
    if (credentials.kind !== 'credentials') return undefined;
    // Decided once heard, then with one digest: a request that waits for its sync is not hashed twice.
    if (!heard) return 'unheard';
    if (!verified.has(clientAddress, credentials.login, credentials.token)) return undefined;
    const found = cache.find(credentials.login, credentials.token);
    return found && seenRecently(found.row) ? found.user : undefined;
  };
  return Object.assign(check, { knownNow });
}

/** GET /Device and /Device/Available (the lists pollers ask for): their change stamps are read with the credentials. */
const DEVICE_LIST_PATH = /^\/device(\/available)?\/?$/i;
const readsDeviceList = (req: Request): boolean => (req.method === 'GET' || req.method === 'HEAD') && DEVICE_LIST_PATH.test(req.path);

/** The exact compact body, or the same indented for `pretty=true`. */
export function sendAuthenticationRequired(res: Response, pretty = false): void {
  // Written straight to the socket: the most frequent refusal (clients that wait for the challenge) costs no more
  // than an answer with data.
  const body = pretty ? PRETTY_AUTHENTICATION_REQUIRED : COMPACT_AUTHENTICATION_REQUIRED;
  res.writeHead(401, {
    'WWW-Authenticate': WWW_AUTHENTICATE, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': body.length,
  });
  res.end(body);
}

const COMPACT_AUTHENTICATION_REQUIRED = Buffer.from(AUTHENTICATION_REQUIRED_BODY);
const PRETTY_AUTHENTICATION_REQUIRED = Buffer.from(JSON.stringify(JSON.parse(AUTHENTICATION_REQUIRED_BODY), null, 2));

export function sendTooManyFailures(res: Response, waitMs: number, pretty: boolean): void {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  res.set('Retry-After', String(seconds));
  writeFailure(
    res, 429,
    `Too many failed logins from this client address or for this login; try again in ${seconds} second(s).`,
    pretty,
  );
}
