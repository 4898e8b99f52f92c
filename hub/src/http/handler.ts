/**
 * The one place where a request becomes a call and a result becomes a response. Handlers receive the merged
 * parameters and the authenticated user and return the body to write; a thrown ApiFailure becomes a failure
 * Result with HTTP 200; anything else reaches the catch-all (HTTP 500, logged).
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiFailure } from '@devicelab/shared';
import type { Logger } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { sendAuthenticationRequired } from './basic-auth';
import { prettyRequested, requestParams, type RequestParams } from './params';
import { writeFailure, writeJson } from './respond';

export interface RequestContext {
  req: Request;
  res: Response;
  params: RequestParams;
  user: AuthenticatedUser;
  /** Raw text body of a JSON/urlencoded/text request ('' when none). */
  bodyText: string;
}

/** A handler's answer: a value to write with HTTP 200, or NO_REPLY when it wrote the response itself. */
export const NO_REPLY = Symbol('no-reply');
export type Handler = (ctx: RequestContext) => Promise<unknown>;

export function userOf(req: Request): AuthenticatedUser | undefined {
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
      const result = await handler({ req, res, params, user, bodyText });
      if (result !== NO_REPLY && !res.headersSent) writeJson(res, 200, result, pretty);
    } catch (err) {
      if (err instanceof ApiFailure) {
        if (!res.headersSent) writeFailure(res, 200, err.message, pretty);
        return;
      }
      next(err);
    }
  };
}

/** Unknown paths: 404 with a failure Result. */
export function notFound(): RequestHandler {
  return (req, res) => writeFailure(res, 404, `No resource at '${req.method} ${req.path}'.`, prettyRequested(req));
}

/**
 * Catch-all for errors thrown outside ApiFailure. Client errors raised by body parsers (bad charset, body too
 * large, malformed multipart) keep their 4xx status; everything else is logged and answered 500.
 */
export function errorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    if (res.headersSent) return;
    const pretty = prettyRequested(req);
    if (err instanceof ApiFailure) {
      writeFailure(res, 200, err.message, pretty);
      return;
    }
    const status = (err as { status?: number; statusCode?: number }).status
      ?? (err as { statusCode?: number }).statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      writeFailure(res, status, (err as Error).message || 'Bad request.', pretty);
      return;
    }
    logger.error({ err, method: req.method, url: req.originalUrl }, 'unhandled error in API request');
    writeFailure(res, 500, 'An unexpected error occurred.', pretty);
  };
}
