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

export async function signIn(login: string, token: string): Promise<SessionUser> {
  const user = await call<SessionUser>('POST', '/Session', { login, token });
  return user!;
}

export async function signOut(): Promise<void> {
  await call('DELETE', '/Session');
}

export const may = (user: SessionUser, entitlement: string): boolean => user.entitlements.includes(entitlement);
