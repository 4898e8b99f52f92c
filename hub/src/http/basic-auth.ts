/**
 * HTTP Basic authentication for the REST API: login + API token, through passport-http's BasicStrategy on a
 * private passport instance (no sessions, no global state shared with other middleware).
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Passport } from 'passport';
import { BasicStrategy } from 'passport-http';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { findUserByCredentials } from '../auth/users';
import type { Db } from '../store/database';
import { prettyRequested } from './params';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    /** `req.user` after basicAuthMiddleware. */
    // eslint-disable-next-line @typescript-eslint/no-empty-object-type
    interface User extends AuthenticatedUser {}
  }
}

export const BASIC_REALM = 'DeviceLab';
export const WWW_AUTHENTICATE = `Basic realm="${BASIC_REALM}"`;
/** Exact body of every 401, compact: clients compare it. */
export const AUTHENTICATION_REQUIRED_BODY = '{"isSuccess":false,"errorMessage":"Authentication required."}';

/**
 * Guards every route mounted after it. Missing, malformed or wrong credentials, and inactive users, all get
 * the same 401 (passport-http would answer 400 for a malformed header; clients expect 401 everywhere).
 * Store failures go to the error handler (next(err)), not to a misleading 401.
 */
export function basicAuthMiddleware(db: Db): RequestHandler {
  const passport = new Passport();
  passport.use(
    'basic',
    new BasicStrategy({ realm: BASIC_REALM }, (login, token, done) => {
      // No stored login or token holds a NUL, and PostgreSQL text cannot carry one: simply wrong credentials.
      if (login.includes('\u0000') || token.includes('\u0000')) return done(null, false);
      findUserByCredentials(db, login, token).then(
        (user) => done(null, user ?? false),
        (err: unknown) => done(err),
      );
    }),
  );

  return (req: Request, res: Response, next: NextFunction) => {
    const authenticate = passport.authenticate('basic', { session: false }, (err: unknown, user: AuthenticatedUser | false) => {
      if (err) return next(err);
      if (!user) return sendAuthenticationRequired(res, prettyRequested(req));
      req.user = user;
      next();
    }) as RequestHandler;
    authenticate(req, res, next);
  };
}

/** The exact compact body, or the same indented for `pretty=true`. */
export function sendAuthenticationRequired(res: Response, pretty = false): void {
  const body = pretty ? JSON.stringify(JSON.parse(AUTHENTICATION_REQUIRED_BODY), null, 2) : AUTHENTICATION_REQUIRED_BODY;
  res.status(401).set('WWW-Authenticate', WWW_AUTHENTICATE).type('application/json').send(body);
}
