/**
 * View-only shares of a device's live screen. The retainer makes them, for a link (a token shown once; only its
 * SHA-256 is kept) or for a named user, lists and revokes them. A share stands on the retain it was made in: it
 * opens nothing once that retain ends. Making a share of a new retain clears the rows of the device's old retains.
 */
import { createHash, randomBytes } from 'node:crypto';
import { ApiFailure } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { withTx, type Db, type Tx } from '../store/database';
import { resolveDevice } from './device-queries';
import { NOT_YOUR_RETAIN } from './device-connection';

/** Shares of one retain at most (links and users together). */
export const MAX_SHARES_PER_RETAIN = 50;

export interface ScreenShare {
  id: string;
  /** Set for a share naming a user. */
  userLogin?: string;
  /** Set once, in the answer that made a link share: the token to put in `share=`. */
  token?: string;
  createdAt: Date;
}

export const shareTokenDigest = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

type Retained = Awaited<ReturnType<typeof resolveDevice>> & { retain_id: string };

/** The device, when `user` retains it now; otherwise the failure they get. */
async function retainedByCaller(db: Db | Tx, user: AuthenticatedUser, identifier: string): Promise<Retained> {
  const device = await resolveDevice(db, identifier);
  if (device.deleted) throw new ApiFailure('Device is deleted.', 'DEVICE_UNAVAILABLE');
  if (!device.retain_id || device.retained_by !== user.id) throw new ApiFailure(NOT_YOUR_RETAIN(device.name), 'DEVICE_NOT_RETAINED');
  return device as Retained;
}

export async function createScreenShare(db: Db, user: AuthenticatedUser, identifier: string, forLogin?: string): Promise<ScreenShare> {
  return withTx(db, async (trx) => {
    const device = await retainedByCaller(trx, user, identifier);
    await trx.deleteFrom('screen_shares').where('device_id', '=', device.id).where('retain_id', '<>', device.retain_id).execute();
    const count = await trx.selectFrom('screen_shares').select((eb) => eb.fn.countAll<string>().as('n'))
      .where('device_id', '=', device.id).executeTakeFirstOrThrow();
    if (Number(count.n) >= MAX_SHARES_PER_RETAIN) {
      throw new ApiFailure(`Device '${device.name}' has ${MAX_SHARES_PER_RETAIN} shares already; revoke one first.`);
    }
    if (forLogin !== undefined) {
      const target = await trx.selectFrom('users').select(['id', 'login']).where('login', '=', forLogin).executeTakeFirst();
      if (!target) throw new ApiFailure(`No user '${forLogin.slice(0, 100)}'.`, 'INVALID_PARAMETER');
      const row = await trx.insertInto('screen_shares')
        .values({ device_id: device.id, retain_id: device.retain_id, user_id: target.id, created_by: user.id })
        .returning(['id', 'created_at']).executeTakeFirstOrThrow();
      return { id: row.id, userLogin: target.login, createdAt: row.created_at };
    }
    const token = randomBytes(24).toString('base64url');
    const row = await trx.insertInto('screen_shares')
      .values({ device_id: device.id, retain_id: device.retain_id, token_sha256: shareTokenDigest(token), created_by: user.id })
      .returning(['id', 'created_at']).executeTakeFirstOrThrow();
    return { id: row.id, token, createdAt: row.created_at };
  });
}

/** The shares of the caller's current retain of the device (tokens are not shown again). */
export async function listScreenShares(db: Db, user: AuthenticatedUser, identifier: string): Promise<{ deviceId: string; shares: ScreenShare[] }> {
  const device = await retainedByCaller(db, user, identifier);
  const rows = await db.selectFrom('screen_shares').leftJoin('users', 'users.id', 'screen_shares.user_id')
    .select(['screen_shares.id', 'screen_shares.created_at', 'users.login'])
    .where('screen_shares.device_id', '=', device.id).where('screen_shares.retain_id', '=', device.retain_id)
    .orderBy('screen_shares.created_at').execute();
  return {
    deviceId: device.id,
    shares: rows.map((row) => ({ id: row.id, createdAt: row.created_at, ...(row.login ? { userLogin: row.login } : {}) })),
  };
}

/** Revokes one share of the caller's retain; resolves with the device's Guid (its viewers through it are ended). */
export async function revokeScreenShare(db: Db, user: AuthenticatedUser, identifier: string, shareId: string): Promise<string> {
  const device = await retainedByCaller(db, user, identifier);
  const removed = await db.deleteFrom('screen_shares').where('id', '=', shareId).where('device_id', '=', device.id)
    .returning('id').executeTakeFirst();
  if (!removed) throw new ApiFailure(`Device '${device.name}' has no share ${shareId}.`, 'INVALID_PARAMETER');
  return device.id;
}

/** The share of the device's current retain that `token` or `user` holds, if any. */
export async function findScreenShare(
  db: Db | Tx, deviceId: string, retainId: string, user: AuthenticatedUser, token: string | undefined,
): Promise<string | undefined> {
  let query = db.selectFrom('screen_shares').select('id').where('device_id', '=', deviceId).where('retain_id', '=', retainId);
  query = token
    ? query.where((eb) => eb.or([eb('token_sha256', '=', shareTokenDigest(token)), eb('user_id', '=', user.id)]))
    : query.where('user_id', '=', user.id);
  return (await query.limit(1).executeTakeFirst())?.id;
}
