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

interface BasicAuthOptions {
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
export function basicAuthMiddleware(db: Db, options: BasicAuthOptions = {}): RequestHandler {
  const logger = options.logger ?? createLogger('hub');
  const throttle = options.throttle ?? new LoginThrottle();
  const verified = options.verified ?? new VerifiedCredentials();
  const reads = new CredentialReads(db);
  const cache = options.kept ? new CredentialCache(options.kept) : undefined;

  return (req: Request, res: Response, next: NextFunction) => {
    const header = req.headers.authorization;
    if (header === undefined) return sendAuthenticationRequired(res, prettyRequested(req));
    const clientAddress = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const credentials = parseBasicCredentials(header);
    const login = credentials.login;

    const fail = (reason: string) => {
      logger.warn({ login: login?.slice(0, LOGGED_LOGIN_CHARS), clientAddress, reason }, 'authentication failed');
      sendAuthenticationRequired(res, prettyRequested(req));
    };
    if (credentials.kind === 'malformed') {
      const attempt = throttle.begin(clientAddress, login);
      if (attempt.waitMs > 0) return sendTooManyFailures(res, attempt.waitMs, prettyRequested(req));
      return fail(`malformed credentials: ${credentials.reason}`);
    }
    // Credentials this client verified a moment ago are checked without reserving a failed login first; should the check
    // fail now (token rotated, user disabled), the failure is counted as any other.
    const known = verified.has(clientAddress, credentials.login, credentials.token);
    const attempt = known ? undefined : throttle.begin(clientAddress, login);
    if (attempt && attempt.waitMs > 0) return sendTooManyFailures(res, attempt.waitMs, prettyRequested(req));
    const listsWanted = readsDeviceList(req);
    let keptStamps: ListStamps | undefined;
    const synced = options.kept ? options.kept.sync() : Promise.resolve(false);
    synced.then((live) => {
      // Every write committed before this request has been heard: what has been heard so far stands for the lists'
      // stamps (taken before any read), and kept credentials may be used.
      keptStamps = live && listsWanted ? options.kept!.stamp() : undefined;
      req.keptReads = live;
      const via = { reads, withListStamps: listsWanted && keptStamps === undefined, cache: live ? cache : undefined };
      return checkCredentials(db, credentials.login, credentials.token, via);
    }).then((check) => {
      if ('failure' in check) {
        if (known) {
          verified.forget(clientAddress, credentials.login, credentials.token);
          throttle.begin(clientAddress, login); // spends a failure (or finds the budget empty already)
        }
        return fail(check.failure);
      }
      attempt?.succeeded();
      verified.remember(clientAddress, credentials.login, credentials.token);
      req.user = check.user;
      req.listStamps = keptStamps ?? check.listStamps;
      next();
    }, (err: unknown) => {
      attempt?.unchecked(); // no failed login: clients retrying through an outage are not throttled after it
      next(err);
    });
  };
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

function sendTooManyFailures(res: Response, waitMs: number, pretty: boolean): void {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  res.set('Retry-After', String(seconds));
  writeFailure(
    res, 429,
    `Too many failed logins from this client address or for this login; try again in ${seconds} second(s).`,
    pretty,
  );
}
