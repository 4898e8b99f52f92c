/**
 * The one place where a request becomes a call and a result becomes a response. Handlers receive the merged
 * parameters and the authenticated user and return the body to write; a thrown ApiFailure becomes a failure
 * Result with HTTP 200; anything else reaches the catch-all (HTTP 500, logged).
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiFailure, UNEXPECTED_ERROR_MESSAGE } from '@devicelab/shared';
import type { Logger } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import type { ListStamps } from '../domain/device-list-cache';
import { sendAuthenticationRequired } from './basic-auth';
import { echo } from './echo';
import { isDatabaseUnavailable } from '../store/database';
import { prettyRequested, requestParams, type RequestParams } from './params';
import { writeApiFailure, writeFailure, writeJson } from './respond';

export interface RequestContext {
  req: Request;
  res: Response;
  params: RequestParams;
  user: AuthenticatedUser;
  /** Raw text body of a JSON/urlencoded/text request ('' when none). */
  bodyText: string;
  /** The device lists' change stamps read with the credentials, for the list routes (absent: read them anew). */
  listStamps?: ListStamps;
}

/** A handler's answer: a value to write with HTTP 200, or NO_REPLY when it wrote the response itself. */
export const NO_REPLY = Symbol('no-reply');
export type Handler = (ctx: RequestContext) => Promise<unknown>;

function userOf(req: Request): AuthenticatedUser | undefined {
  return (req as unknown as { user?: AuthenticatedUser }).user;
}

export function handle(handler: Handler): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    let pretty = false;
    try {
      const params = requestParams(req);
      pretty = params.pretty();
      const user = userOf(req);
      if (!user) {
        sendAuthenticationRequired(res, pretty); // only reachable if a router was mounted outside the auth middleware
        return;
      }
      const bodyText = typeof req.body === 'string' ? req.body : '';
      const result = await handler({ req, res, params, user, bodyText, listStamps: req.listStamps });
      if (result !== NO_REPLY && !res.headersSent) writeJson(res, 200, result, pretty);
    } catch (err) {
      if (err instanceof ApiFailure) {
        if (!res.headersSent) writeApiFailure(res, err, pretty);
        return;
      }
      next(err);
    }
  };
}

/** While PostgreSQL is away (restarting, unreachable) every request, authentication included, gets 503. */
export const RECORDS_STORE_UNAVAILABLE = 'The records store (PostgreSQL) is unavailable; try again in a few seconds.';
export const RECORDS_STORE_RETRY_SECONDS = 5;
/** The parameter keys one route knows (lower-case), and how the failure text names the route (`GET /Device`). */
export interface RouteParameters { route: string; keys: ReadonlySet<string> }

/**
 * Refuses a request that carries a key its route does not know (wire rule 24, docs/wire-rules.md) before any handler
 * runs. `routes` is keyed by `METHOD /path` with the path in lower case, as express matches it (letter case and a
 * trailing slash ignored); routes not in it pass.
 */
export function rejectUnknownParameters(routes: ReadonlyMap<string, RouteParameters>): RequestHandler {
  return (req, res, next) => {
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const known = routes.get(`${method} ${req.path.replace(/\/+$/, '').toLowerCase()}`);
    if (!known) {
      next();
      return;
    }
    try {
      requestParams(req).assertKnownKeys(known.keys, known.route);
    } catch (err) {
      if (!(err instanceof ApiFailure)) {
        next(err);
        return;
      }
      writeApiFailure(res, err, prettyRequested(req));
      return;
    }
    next();
  };
}

/** Unknown paths: 404 with a failure Result. */
export function notFound(): RequestHandler {
  return (req, res) => writeFailure(res, 404, `No resource at '${req.method} ${echo(req.path)}'.`, prettyRequested(req));
}

/**
 * Catch-all for errors thrown outside ApiFailure. Client errors raised by body parsers (bad charset, body too
 * large, malformed multipart) keep their 4xx status; the records store being away is 503; everything else is
 * logged and answered 500.
 */
export function errorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    if (res.headersSent) return;
    const pretty = prettyRequested(req);
    if (err instanceof ApiFailure) {
      writeApiFailure(res, err, pretty);
      return;
    }
    const status = (err as { status?: number; statusCode?: number }).status
      ?? (err as { statusCode?: number }).statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      writeFailure(res, status, (err as Error).message || 'Bad request.', pretty);
      return;
    }
    if (isDatabaseUnavailable(err)) {
      res.set('Retry-After', String(RECORDS_STORE_RETRY_SECONDS));
      writeFailure(res, 503, RECORDS_STORE_UNAVAILABLE, pretty);
      return;
    }
    logger.error({ err, method: req.method, url: req.originalUrl }, 'unhandled error in API request');
    writeFailure(res, 500, UNEXPECTED_ERROR_MESSAGE, pretty);
  };
}
