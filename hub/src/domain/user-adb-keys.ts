/**
 * A user's adb public keys: the keys whose holder may open a device that user retains, through the
 * device's adb endpoint on its gateway. Adding or removing your own needs UserModifySelf (or UserModify),
 * anyone else's UserModify and the reach rule (`./privilege`); a user's keys are shown to whoever may see that
 * user (themselves, or UserList). A change reaches the gateways of the devices the user retains at once.
 */
import { ApiFailure, InvalidAdbPublicKeyError, parseAdbPublicKey } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { hasEntitlement, missingEntitlement } from '../auth/entitlements';
import type { GatewayDirectory } from '../gateways/gateway-directory';
import { isUniqueViolation, withTx, type Db, type Tx } from '../store/database';
import { readDeferred, type Deferred } from './deferred-input';
import { announceDeviceAccess, devicesRetainedBy } from './device-access';
import { requireUserWithinReach } from './privilege';
import { userNotFound } from './users';
import { requireModifyRight } from './users-changes';

/** At most this many keys per user (a CI fleet has a few; the list travels in every Retention). */
const MAX_KEYS_PER_USER = 50;

export interface AdbKeyDescription {
  fingerprint: string;
  comment: string;
  addedAt: string;
  /** The key as adbkey.pub holds it (without the comment). */
  key: string;
}

type AccessNotifier = Pick<GatewayDirectory, 'notifyRetention'>;

export async function addAdbKey(
  db: Db, caller: AuthenticatedUser, userId: string, keyText: Deferred<string>, gateways?: AccessNotifier,
): Promise<AdbKeyDescription> {
  requireModifyRight(caller, userId);
  let parsed;
  try {
    parsed = parseAdbPublicKey(readDeferred(keyText));
  } catch (err) {
    if (err instanceof InvalidAdbPublicKeyError) throw new ApiFailure(err.message);
    throw err;
  }
  const key = parsed;
  const row = await withTx(db, async (trx) => {
    await lockReachableUser(trx, caller, userId);
    const count = await trx.selectFrom('user_adb_keys').select((eb) => eb.fn.countAll<string>().as('n'))
      .where('user_id', '=', userId).executeTakeFirstOrThrow();
    if (Number(count.n) >= MAX_KEYS_PER_USER) throw new ApiFailure(`A user has at most ${MAX_KEYS_PER_USER} adb keys.`);
    try {
      return await trx.insertInto('user_adb_keys')
        .values({ user_id: userId, fingerprint: key.fingerprint, key: key.struct, comment: key.comment })
        .returningAll().executeTakeFirstOrThrow();
    } catch (err) {
      if (isUniqueViolation(err)) throw new ApiFailure(`The adb key ${key.fingerprint} is already registered for this user.`, 'ADB_KEY_EXISTS');
      throw err;
    }
  });
  await announceDeviceAccess(db, gateways, await devicesRetainedBy(db, userId));
  return describe(row);
}

export async function removeAdbKey(
  db: Db, caller: AuthenticatedUser, userId: string, fingerprint: Deferred<string>, gateways?: AccessNotifier,
): Promise<void> {
  requireModifyRight(caller, userId);
  const wanted = readDeferred(fingerprint).trim().toLowerCase();
  await withTx(db, async (trx) => {
    await lockReachableUser(trx, caller, userId);
    const removed = await trx.deleteFrom('user_adb_keys').where('user_id', '=', userId).where('fingerprint', '=', wanted)
      .executeTakeFirst();
    if (Number(removed.numDeletedRows) === 0) throw new ApiFailure(`User has no adb key with fingerprint '${wanted}'.`);
  });
  await announceDeviceAccess(db, gateways, await devicesRetainedBy(db, userId));
}

/** GET /User/AdbKey: oneself, or anyone with UserList (who may see that user). */
export async function listAdbKeys(db: Db, caller: AuthenticatedUser, userId: string): Promise<AdbKeyDescription[]> {
  if (userId !== caller.id && !hasEntitlement(caller, 'UserList')) throw missingEntitlement('UserList');
  const user = await db.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst();
  if (!user) throw new ApiFailure(userNotFound(userId));
  const rows = await db.selectFrom('user_adb_keys').selectAll().where('user_id', '=', userId).orderBy('added_at').execute();
  return rows.map(describe);
}

function describe(row: { fingerprint: string; comment: string; added_at: Date; key: Buffer }): AdbKeyDescription {
  return { fingerprint: row.fingerprint, comment: row.comment, addedAt: row.added_at.toISOString(), key: row.key.toString('base64') };
}

async function lockReachableUser(trx: Tx, caller: AuthenticatedUser, userId: string): Promise<void> {
  const row = await trx.selectFrom('users').select(['id', 'login']).where('id', '=', userId).forUpdate().executeTakeFirst();
  if (!row) throw new ApiFailure(userNotFound(userId));
  await requireUserWithinReach(trx, caller, row);
}
