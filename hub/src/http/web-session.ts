/**
 * The dashboard's sign-in over HTTP: `POST /apiv1/Session` (form `login`, `token`) sets an HTTP-only,
 * SameSite=Strict session cookie (Secure over TLS), `DELETE /apiv1/Session` signs out, `GET /apiv1/Session` says
 * who is signed in and what they may do. `sessionOrBasicAuth` accepts that cookie next to Basic auth. A request
 * that changes something on the strength of the cookie alone must come from this origin (its Origin header: the
 * same scheme, host and port) or carry `X-DeviceLab-CSRF: 1`, which no other site can send without a CORS
 * preflight we never grant. The hub's own scheme is the request's (`req.protocol`): behind a TLS-terminating proxy
 * it is https only when the proxy is trusted (`trust proxy`, DEVICELAB_TRUST_PROXY) and sends X-Forwarded-Proto.
 */
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { createLogger, successWith, type Logger } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { LoginThrottle } from '../auth/login-throttle';
import { checkCredentials } from '../auth/users';
import { SessionCache } from '../auth/session-cache';
import { createWebSession, deleteWebSession, findWebSession, WEB_SESSION_LIFETIME_MS } from '../auth/web-sessions';
import type { Db } from '../store/database';
import type { KeptReads } from '../events/kept-reads';
import { AUTHENTICATION_REQUIRED_BODY, basicAuthMiddleware, sendAuthenticationRequired } from './basic-auth';
import { textBody } from './body';
import { handle } from './handler';
import { prettyRequested, requestParams } from './params';
import { writeFailure, writeJson } from './respond';

export const SESSION_COOKIE = 'devicelab_session';
export const CSRF_HEADER = 'x-devicelab-csrf';
/** The CSRF header's one accepted value (what the dashboard sends). */
const CSRF_VALUE = '1';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const SIGN_IN_FAILED = 'Sign-in failed: wrong login or token.';

interface WebSessionOptions {
  logger?: Logger;
  /** Shared with Basic auth, so that guessing through the sign-in form is throttled alike. */
  throttle: LoginThrottle;
  /** Reads kept between writes (verified credentials and sessions). */
  kept?: KeptReads;
}

/** The session cookie's value, when the request carries one. */
export function sessionCookieOf(req: Pick<Request, 'headers'>): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The request carries `X-DeviceLab-CSRF: 1`, as the dashboard sends it. */
function hasCsrfHeader(req: Request): boolean {
  return req.headers[CSRF_HEADER] === CSRF_VALUE;
}

/** Same origin: the CSRF header, or an Origin of the same scheme, host and port as the hub as this request reached it. */
function isSameOriginRequest(req: Request): boolean {
  if (hasCsrfHeader(req)) return true;
  const origin = req.headers.origin;
  if (!origin || origin === 'null' || !req.host) return false;
  try {
    // URL's origin drops a scheme's default port, so https://hub and https://hub:443 are one origin.
    return new URL(origin).origin === new URL(`${req.protocol}://${req.host}`).origin;
  } catch {
    return false;
  }
}

/** Whether the session a request was authenticated by still stands: a long-lived answer (the event stream) asks again. */
export type SessionCheck = () => Promise<boolean>;

/** The check of a request authenticated by the session cookie; undefined for Basic auth. */
export function sessionCheckOf(req: Request): SessionCheck | undefined {
  return (req as Request & { sessionCheck?: SessionCheck }).sessionCheck;
}

function cookieAttributes(req: Request, maxAgeSeconds: number): string {
  const secure = req.secure ? '; Secure' : '';
  return `Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure}`;
}

/**
 * Basic auth when an Authorization header is sent, else the session cookie; 401 when neither holds. The
 * dashboard (it sends the CSRF header) gets its 401 without the Basic challenge, so the browser shows no password
 * dialog of its own.
 */
export function sessionOrBasicAuth(db: Db, options: WebSessionOptions): RequestHandler & { now: AuthenticationNow } {
  const basic = basicAuthMiddleware(db, { logger: options.logger, throttle: options.throttle, kept: options.kept });
  const sessions = keptSessions(db, options.kept);
  const middleware: RequestHandler = (req, res, next) => {
    const fromDashboard = hasCsrfHeader(req);
    const cookie = req.headers.authorization === undefined ? sessionCookieOf(req) : undefined;
    if (cookie === undefined) {
      if (req.headers.authorization === undefined && fromDashboard) return sendSignInRequired(res);
      return basic(req, res, next);
    }
    if (!SAFE_METHODS.has(req.method) && !isSameOriginRequest(req)) {
      return writeFailure(res, 403, 'Cross-site request refused: send it from the dashboard\'s origin or with the X-DeviceLab-CSRF header.',
        prettyRequested(req));
    }
    sessions(cookie).then(({ user, keptReads }) => {
      if (!user) return fromDashboard ? sendSignInRequired(res) : sendAuthenticationRequired(res, prettyRequested(req));
      const authenticated = req as Request & { user?: AuthenticatedUser; sessionCheck?: SessionCheck };
      authenticated.user = user;
      authenticated.sessionCheck = async () => (await sessions(cookie)).user !== undefined;
      req.keptReads = keptReads;
      // Heard everything committed before this request: what was heard stands for the device lists' stamps.
      if (keptReads) req.listStamps = options.kept?.stamp();
      next();
    }, next);
  };
  const now: AuthenticationNow = (req, heard) => {
    if (req.headers.authorization !== undefined) return basic.knownNow(req, heard);
    // Neither credentials nor a session cookie, and not the dashboard: the Basic challenge, as `basic` answers it.
    return sessionCookieOf(req) === undefined && !hasCsrfHeader(req) ? 'refused' : undefined;
  };
  return Object.assign(middleware, { now });
}

/**
 * What the authentication middleware decides for a request without reading anything: its user (credentials verified
 * and kept, http/basic-auth.ts KnownNow, which says when it needs every earlier write `heard` first: `unheard`),
 * `refused` (no credentials of any kind: answer the Basic challenge), or undefined: run the middleware.
 */
export type AuthenticationNow = (req: Request, heard: boolean) => AuthenticatedUser | 'refused' | 'unheard' | undefined;

/**
 * The user of a session cookie, from memory when kept reads may be used (every write committed before this
 * request heard, http/basic-auth.ts does the same for credentials), else from the records.
 */
function keptSessions(db: Db, kept: KeptReads | undefined) {
  const cache = kept ? new SessionCache(kept) : undefined;
  return async (cookie: string): Promise<{ user: AuthenticatedUser | undefined; keptReads: boolean }> => {
    const keptReads = kept ? await kept.sync() : false;
    if (!keptReads || !cache) return { user: (await findWebSession(db, cookie))?.user, keptReads };
    const known = cache.find(cookie);
    if (known) return { user: known.user, keptReads };
    const stamp = cache.stamp();
    const session = await findWebSession(db, cookie);
    if (session) cache.remember(cookie, stamp, session);
    return { user: session?.user, keptReads };
  };
}

function sendSignInRequired(res: Response): void {
  res.status(401).type('application/json').send(AUTHENTICATION_REQUIRED_BODY);
}

/** POST and DELETE /Session: mounted before the authentication middleware (they are how one gets a cookie). */
export function webSessionRouter(db: Db, options: WebSessionOptions): Router {
  const logger = options.logger ?? createLogger('hub');
  const router = express.Router();
  router.post('/Session', textBody(16 * 1024), (req, res, next) => {
    if (req.headers.origin !== undefined && !isSameOriginRequest(req)) {
      return writeFailure(res, 403, 'Cross-site sign-in refused.', false);
    }
    let login: string | undefined;
    let token: string | undefined;
    try {
      const params = requestParams(req);
      login = params.string('login');
      token = params.string('token');
    } catch {
      // unreadable parameters are a failed sign-in like any other
    }
    const clientAddress = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const attempt = options.throttle.begin(clientAddress, login);
    if (attempt.waitMs > 0) {
      res.set('Retry-After', String(Math.max(1, Math.ceil(attempt.waitMs / 1000))));
      return writeFailure(res, 429, 'Too many failed sign-ins; try again later.', false);
    }
    if (!login || !token) return writeFailure(res, 401, SIGN_IN_FAILED, false);
    checkCredentials(db, login, token).then(async (check) => {
      if ('failure' in check) {
        logger.warn({ login: login!.slice(0, 200), clientAddress, reason: check.failure }, 'dashboard sign-in failed');
        return writeFailure(res, 401, SIGN_IN_FAILED, false);
      }
      attempt.succeeded();
      const session = await createWebSession(db, check.user.id);
      res.set('Set-Cookie', `${SESSION_COOKIE}=${session.token}; ${cookieAttributes(req, WEB_SESSION_LIFETIME_MS / 1000)}`);
      writeJson(res, 200, successWith(describeUser(check.user)), false);
    }, (err: unknown) => {
      attempt.unchecked();
      next(err);
    });
  });
  router.delete('/Session', (req, res, next) => {
    const cookie = sessionCookieOf(req);
    if (cookie !== undefined && !isSameOriginRequest(req)) return writeFailure(res, 403, 'Cross-site sign-out refused.', false);
    res.set('Set-Cookie', `${SESSION_COOKIE}=; ${cookieAttributes(req, 0)}`);
    (cookie ? deleteWebSession(db, cookie) : Promise.resolve()).then(() => writeJson(res, 200, { isSuccess: true }, false), next);
  });
  return router;
}

/** GET /Session behind authentication: who is signed in and what they may do (the dashboard hides the rest). */
export function currentSessionRouter(): Router {
  const router = express.Router();
  router.get('/Session', handle(async ({ user }) => successWith(describeUser(user))));
  return router;
}

function describeUser(user: AuthenticatedUser) {
  return { id: user.id, login: user.login, displayName: user.displayName, roles: user.roles, entitlements: [...user.entitlements].sort() };
}
