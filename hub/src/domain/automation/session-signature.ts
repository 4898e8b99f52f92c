/**
 * A WebDriver session id is the only credential its commands need (clients send credentials with `POST /session`
 * alone), so the whole id is told only to the session's user and administrators; everyone else sees its signature,
 * the first 8 characters, which is how Appium's own log names a session.
 */
import { hasEntitlement } from '../../auth/entitlements';
import type { AuthenticatedUser } from '../../auth/authenticated-user';

export const sessionSignature = (sessionId: string): string => sessionId.slice(0, 8);

/** Administrators (DeviceReleaseAny) may end and drive anyone's session, so they may learn every session id. */
export const administersSessions = (user: AuthenticatedUser): boolean => hasEntitlement(user, 'DeviceReleaseAny');

/** May `user` learn the whole id of a session of `ownerId`? */
export const seesSessionId = (user: AuthenticatedUser, ownerId: string): boolean =>
  user.id === ownerId || administersSessions(user);

/** `text` with every one of `sessionIds` cut to its signature. */
export function withSignatures(text: string, sessionIds: readonly string[]): string {
  let out = text;
  for (const id of sessionIds) if (id.length > 8) out = out.split(id).join(sessionSignature(id));
  return out;
}
