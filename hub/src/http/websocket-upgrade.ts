/**
 * WebSocket endpoints of the REST API: the HTTP server's `upgrade` requests, routed by path (one line
 * per path in `routes`), authenticated before anything is accepted. Basic credentials are checked as for every
 * request (throttled like them); a route may also take `Authorization: Bearer <token>` and check it itself
 * (a DeviceAccessTicket authenticator). A refused upgrade gets an HTTP answer with a failure Result, never a
 * socket: 401 without valid credentials, 404 for an unknown path, the route's own status otherwise.
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Logger } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { parseBasicCredentials } from '../auth/basic-credentials';
import type { LoginThrottle } from '../auth/login-throttle';
import { checkCredentials } from '../auth/users';
import { findWebSessionUser } from '../auth/web-sessions';
import type { Db } from '../store/database';
import { vouchedOrigin } from '../fleet/forwarded-origin';
import { SESSION_COOKIE, sessionCookieOf } from './web-session';

export interface UpgradeRequest {
  url: URL;
  /** The TCP peer (X-Forwarded-For is not read on upgrades). */
  clientAddress: string;
  /** Set after Basic authentication. */
  user?: AuthenticatedUser;
  /** Set when the client sent `Authorization: Bearer <token>` to a route that takes one. */
  bearer?: string;
  /** The Authorization header as sent: a route that forwards the connection to another replica sends it on. */
  authorization: string;
  /** The `DeviceLab-Forwarded-By` header: set by a replica that forwarded this connection (never trusted for auth). */
  forwardedBy?: string;
  /** The session cookie that authenticated it (a route that forwards the connection sends it on). */
  cookie?: string;
  /** The Origin header as sent (forwarded with the cookie). */
  origin?: string;
  /** The Host the browser sent, which its Origin was checked against (vouched for when forwarded with the cookie). */
  host?: string;
}

export type UpgradeDecision =
  | { accept(ws: WebSocket): void; /** Added to the 101 answer. */ headers?: Record<string, string> }
  | { status: number; message: string };

export interface WebSocketRoute {
  /** Whether `Authorization: Bearer` is this route's to check (otherwise only Basic credentials open it). */
  acceptsBearer?: boolean;
  /**
   * Whether the dashboard's session cookie opens it (without an Authorization header). Browsers send cookies on
   * WebSockets from any site, so the Origin must then be the hub's own (same host), as the CSRF rule asks.
   */
  acceptsSessionCookie?: boolean;
  decide(request: UpgradeRequest): Promise<UpgradeDecision>;
}

interface UpgradeOptions {
  db: Db;
  throttle: LoginThrottle;
  logger: Logger;
  /** Lower-case paths, e.g. `/apiv1/device/connect`. */
  routes: Record<string, WebSocketRoute>;
}

/** Names the replica that forwarded an upgrade to this one (so it is not forwarded again). */
export const FORWARDED_BY_HEADER = 'DeviceLab-Forwarded-By';

const REASONS: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 409: 'Conflict',
  429: 'Too Many Requests', 500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable',
};

/** Serves the routes' upgrades on `server`; answers any other upgrade 404. Returns a stop function. */
export function attachWebSocketRoutes(server: http.Server, options: UpgradeOptions): () => void {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  const extraHeaders = new WeakMap<http.IncomingMessage, Record<string, string>>();
  wss.on('headers', (headers: string[], req: http.IncomingMessage) => {
    for (const [name, value] of Object.entries(extraHeaders.get(req) ?? {})) headers.push(`${name}: ${value}`);
  });
  const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    decideUpgrade(req, options).then((decision) => {
      if ('status' in decision) return refuse(socket, decision.status, decision.message);
      if (decision.headers) extraHeaders.set(req, decision.headers);
      wss.handleUpgrade(req, socket, head, (ws) => decision.accept(ws));
    }, (err: unknown) => {
      options.logger.error({ err }, 'WebSocket upgrade failed');
      refuse(socket, 500, 'An unexpected error occurred.');
    });
  };
  server.on('upgrade', onUpgrade);
  return () => {
    server.off('upgrade', onUpgrade);
    for (const client of wss.clients) client.terminate();
    wss.close();
  };
}

async function decideUpgrade(req: http.IncomingMessage, options: UpgradeOptions): Promise<UpgradeDecision> {
  const url = new URL(req.url ?? '/', 'http://hub');
  const route = options.routes[url.pathname.toLowerCase()];
  if (!route) return { status: 404, message: `No WebSocket endpoint at ${url.pathname}.` };
  const clientAddress = req.socket.remoteAddress ?? 'unknown';
  const header = req.headers.authorization;
  const forwarded = req.headers[FORWARDED_BY_HEADER.toLowerCase()];
  const forwardedBy = typeof forwarded === 'string' ? forwarded.slice(0, 100) : undefined;
  if (header === undefined) {
    const cookie = route.acceptsSessionCookie ? sessionCookieOf(req) : undefined;
    if (cookie === undefined) return { status: 401, message: 'Authentication required.' };
    // Forwarded by another replica: the Host the browser sent there, which that replica signed (forwarded-origin.ts).
    const vouched = await vouchedOrigin(options.db, req, forwardedBy, cookie);
    if (vouched === 'forged') return { status: 403, message: 'Forwarding headers without a valid replica signature refused.' };
    const host = vouched?.host ?? req.headers.host;
    if (!isSameHostOrigin(req.headers.origin, host)) return { status: 403, message: 'Cross-site WebSocket refused: open it from the dashboard\'s origin.' };
    const user = await findWebSessionUser(options.db, cookie);
    if (!user) return { status: 401, message: 'Authentication required.' };
    return route.decide({
      url, clientAddress, user, authorization: '', cookie: `${SESSION_COOKIE}=${cookie}`, origin: req.headers.origin, host,
      forwardedBy: vouched?.by,
    });
  }
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
  if (bearer !== undefined && route.acceptsBearer) return route.decide({ url, clientAddress, bearer, authorization: header, forwardedBy });

  const credentials = parseBasicCredentials(header);
  const attempt = options.throttle.begin(clientAddress, credentials.login);
  if (attempt.waitMs > 0) return { status: 429, message: 'Too many failed logins; try again later.' };
  const fail = (reason: string): UpgradeDecision => {
    options.logger.warn({ login: credentials.login?.slice(0, 200), clientAddress, reason }, 'authentication failed');
    return { status: 401, message: 'Authentication required.' };
  };
  if (credentials.kind === 'malformed') return fail(`malformed credentials: ${credentials.reason}`);
  let check: Awaited<ReturnType<typeof checkCredentials>>;
  try {
    check = await checkCredentials(options.db, credentials.login, credentials.token);
  } catch (err) {
    attempt.unchecked();
    throw err;
  }
  if ('failure' in check) return fail(check.failure);
  attempt.succeeded();
  return route.decide({ url, clientAddress, user: check.user, authorization: header, forwardedBy });
}

/** The Origin names the host the request was sent to (a browser on the dashboard's own page). */
function isSameHostOrigin(origin: string | undefined, host: string | undefined): boolean {
  if (!origin || origin === 'null' || !host) return false;
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}

function refuse(socket: Duplex, status: number, message: string): void {
  const body = JSON.stringify({ isSuccess: false, errorMessage: message });
  const headers = [
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    ...(status === 401 ? ['WWW-Authenticate: Basic realm="DeviceLab"'] : []),
  ];
  socket.end(`${headers.join('\r\n')}\r\n\r\n${body}`);
}
