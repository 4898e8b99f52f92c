/** Who is signed in, and the entitlement checks the pages use to hide what the user may not do. */
import { ApiError, call, getJson } from './api/client';
import type { Result, SessionUser } from './api/types';

export async function currentUser(): Promise<SessionUser | undefined> {
  try {
    const result = await getJson<Result<SessionUser>>('/Session');
    return result.data;
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return undefined;
    throw err;
  }
}

/**
 * A refused sign-in is a 401 like an expired session, but it must say why (the hub's words, e.g. "wrong login or
 * token"), not "Signed out": so it is posted here rather than through `call`, which reads every 401 as a sign-out.
 */
export async function signIn(login: string, token: string): Promise<SessionUser> {
  const res = await fetch('/apiv1/Session', {
    method: 'POST', credentials: 'same-origin', body: new URLSearchParams({ login, token }),
    headers: { 'X-DeviceLab-CSRF': '1', Accept: 'application/json' },
  });
  const body = (await res.json().catch(() => ({ isSuccess: false }))) as Result<SessionUser>;
  if (!body.isSuccess || !body.data) throw new ApiError(body.errorMessage ?? `Sign-in failed (HTTP ${res.status}).`, res.status);
  return body.data;
}

export async function signOut(): Promise<void> {
  await call('DELETE', '/Session');
}

export const may = (user: SessionUser, entitlement: string): boolean => user.entitlements.includes(entitlement);
