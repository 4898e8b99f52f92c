/**
 * Dashboard sessions: a sign-in with login + API token (checked like Basic auth) gets a random session token that
 * the browser keeps in an HTTP-only cookie. The records keep only its SHA-256 and an expiry; signing out deletes
 * the row, so a copied cookie dies with it.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../store/database';
import { hashToken } from './api-tokens';
import type { AuthenticatedUser } from './authenticated-user';
import { loadAuthenticatedUser } from './users';

/** How long a sign-in lasts: one working day and a bit. */
export const WEB_SESSION_LIFETIME_MS = 12 * 60 * 60 * 1000;
/** 32 random bytes, base64url: what the cookie carries. */
const SESSION_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export interface NewWebSession {
  token: string;
  expiresAt: Date;
}

export async function createWebSession(db: Db, userId: string, now = new Date()): Promise<NewWebSession> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + WEB_SESSION_LIFETIME_MS);
  // Expired rows of anyone go at each sign-in: the table stays the size of the signed-in population.
  await db.deleteFrom('web_sessions').where('expires_at', '<', now).execute();
  await db.insertInto('web_sessions').values({ token_sha256: hashToken(token), user_id: userId, expires_at: expiresAt }).execute();
  return { token, expiresAt };
}

/** The active user a live session token belongs to, or undefined (unknown, expired, or the user is inactive). */
export async function findWebSessionUser(db: Db, token: string, now = new Date()): Promise<AuthenticatedUser | undefined> {
  return (await findWebSession(db, token, now))?.user;
}

/** The live session of a token (its user active) and when it expires, or undefined. */
export async function findWebSession(db: Db, token: string, now = new Date()): Promise<{ user: AuthenticatedUser; expiresAt: Date } | undefined> {
  if (!SESSION_TOKEN_PATTERN.test(token)) return undefined;
  const row = await db.selectFrom('web_sessions')
    .innerJoin('users', 'users.id', 'web_sessions.user_id')
    .selectAll('users')
    .select('web_sessions.expires_at as session_expires_at')
    .where('web_sessions.token_sha256', '=', hashToken(token))
    .where('web_sessions.expires_at', '>', now)
    .executeTakeFirst();
  if (!row || !row.is_active) return undefined;
  return { user: await loadAuthenticatedUser(db, row), expiresAt: row.session_expires_at };
}

export async function deleteWebSession(db: Db, token: string): Promise<void> {
  if (!SESSION_TOKEN_PATTERN.test(token)) return;
  await db.deleteFrom('web_sessions').where('token_sha256', '=', hashToken(token)).execute();
}
