/**
 * The JSON wire of an Appium device-side server (the UiAutomator2 server and WebDriverAgent speak the same one):
 * every answer is `{sessionId, value}`; a failure is a W3C error name with its HTTP status and
 * `value: {error, message, stacktrace}`.
 */
import * as http from 'node:http';
import type { Duplex } from 'node:stream';

export class W3cError extends Error {
  constructor(readonly error: string, message: string, readonly status: number) {
    super(message);
  }
}

export const noSuchElement = (m = 'An element could not be located on the page using the given search parameters') => new W3cError('no such element', m, 404);
export const invalidSession = (id: string) => new W3cError('invalid session id', `A session is either terminated or not started (${id})`, 404);
export const unknownCommand = (m: string) => new W3cError('unknown command', m, 404);
export const invalidArgument = (m: string) => new W3cError('invalid argument', m, 400);
export const staleElement = (id: string) => new W3cError('stale element reference', `The element '${id}' does not exist in DOM anymore`, 404);
export const invalidSelector = (m: string) => new W3cError('invalid selector', m, 400);
export const sessionNotCreated = (m: string) => new W3cError('session not created', m, 500);
export const unknownError = (m: string) => new W3cError('unknown error', m, 500);

/** The W3C element reference keys (and JSONWP's). */
export const ELEMENT_KEY = 'element-6066-11e4-a52e-4f735466cecf';
export const elementRef = (id: string) => ({ ELEMENT: id, [ELEMENT_KEY]: id });

/** What a handler gets: the matched path parameters, the JSON body and the query. */
export interface RouteRequest {
  params: Record<string, string>;
  body: Record<string, unknown>;
  query: URLSearchParams;
}

export type RouteHandler = (req: RouteRequest) => unknown | Promise<unknown>;

/** `[method, '/session/:sessionId/element/:id/click', handler]`. */
export type Route = [method: string, pattern: string, handler: RouteHandler];

interface CompiledRoute {
  method: string;
  regex: RegExp;
  names: string[];
  handler: RouteHandler;
}

/** Bodies larger than this are refused: what a device-side server reads is small JSON. */
const MAX_BODY = 8 * 1024 * 1024;

/**
 * An HTTP server that takes connections handed to it (a device socket or a usbmux connection) and dispatches
 * JSON requests to routes. `sessionOf` names the session id an answer carries.
 */
export class JsonWireServer {
  private readonly routes: CompiledRoute[];
  private readonly server: http.Server;
  private readonly sockets = new Set<Duplex>();

  constructor(routes: Route[], private readonly sessionOf: (params: Record<string, string>) => string | null, private readonly stripPrefixes: string[] = []) {
    this.routes = routes.map(([method, pattern, handler]) => {
      const names: string[] = [];
      const source = pattern.replace(/:([A-Za-z]+)/g, (_m, name: string) => {
        names.push(name);
        return '([^/]+)';
      });
      return { method, regex: new RegExp(`^${source}/?$`), names, handler };
    });
    this.server = http.createServer((req, res) => void this.handle(req, res));
    this.server.keepAliveTimeout = 60_000;
  }

  /** Serves one connection until either side closes it. */
  accept(socket: Duplex): void {
    // http.Server expects a net.Socket; a device socket has no timers or Nagle to set.
    const s = socket as Duplex & Record<string, unknown>;
    for (const m of ['setTimeout', 'setNoDelay', 'setKeepAlive']) if (typeof s[m] !== 'function') s[m] = () => socket;
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
    this.server.emit('connection', socket);
  }

  /** Drops every connection (the program serving them ended). */
  closeAll(): void {
    for (const s of [...this.sockets]) s.destroy();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let params: Record<string, string> = {};
    try {
      const body = await readJson(req);
      const url = new URL(req.url ?? '/', 'http://device');
      let path = url.pathname;
      for (const prefix of this.stripPrefixes) if (path.startsWith(prefix + '/')) path = path.slice(prefix.length);
      const method = (req.method ?? 'GET').toUpperCase();
      let matched: { route: CompiledRoute; values: string[] } | undefined;
      for (const route of this.routes) {
        const m = route.regex.exec(path);
        if (m && route.method === method) {
          matched = { route, values: m.slice(1) };
          break;
        }
      }
      if (!matched) throw unknownCommand(`The requested resource could not be found, or a request was received using an HTTP method that is not supported by the mapped resource: ${method} ${path}`);
      params = Object.fromEntries(matched.route.names.map((n, i) => [n, decodeURIComponent(matched!.values[i])]));
      const value = await matched.route.handler({ params, body, query: url.searchParams });
      send(res, 200, { sessionId: this.sessionOf(params), value: value === undefined ? null : value });
    } catch (e) {
      const err = e instanceof W3cError ? e : unknownError(e instanceof Error ? e.message : String(e));
      send(res, err.status, { sessionId: params.sessionId ?? null, value: { error: err.error, message: err.message, stacktrace: `${err.error}: ${err.message}` } });
    }
  }
}

function send(res: http.ServerResponse, status: number, payload: unknown): void {
  const text = JSON.stringify(payload);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw invalidArgument('The request body is too large');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (!text) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    throw invalidArgument(`The request body is not valid JSON: ${text.slice(0, 80)}`);
  }
}
