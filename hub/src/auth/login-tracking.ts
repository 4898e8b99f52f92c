/**
 * When does a "login" happen for an API that authenticates every request? A request is a login when the user
 * made no authenticated request for LOGIN_IDLE_MINUTES (or never did): then `last_login_at` is set and a
 * UserLogin event ("User Login") is written. Every later request only refreshes `last_seen_at`, at most once a
 * minute, so an active client does not turn each call into a write.
 */
import { sql } from 'kysely';
import { recordEvent } from '../domain/events';
import { withTx, type Db } from '../store/database';
import type { CheckedUserRow } from './credential-reads';
import { displayNameOf } from './authenticated-user';

const LOGIN_IDLE_MINUTES = 30;
const SEEN_RESOLUTION_MS = 60_000;

/**
 * Users whose authentication this process is noting right now. Their other requests meanwhile skip the note:
 * 200 concurrent requests of one user after a quiet minute all read a stale `last_seen_at`, and each used to
 * queue on the user's row lock for the same write (seconds under load, for every request of that user).
 */
const notingNow = new Set<string>();

/** Whether an authentication of `row` now needs no note (its last_seen_at is recent): noteAuthentication does nothing. */
export function seenRecently(row: CheckedUserRow): boolean {
  return !!row.last_seen_at && Date.now() - new Date(row.last_seen_at).getTime() < SEEN_RESOLUTION_MS;
}

export async function noteAuthentication(db: Db, row: CheckedUserRow): Promise<void> {
  if (seenRecently(row)) return;
  if (notingNow.has(row.id)) return;
  notingNow.add(row.id);
  try {
    await noteNow(db, row);
  } finally {
    notingNow.delete(row.id);
  }
}

async function noteNow(db: Db, row: CheckedUserRow): Promise<void> {
  await withTx(db, async (trx) => {
    // The WHERE is re-checked on the locked row, so of two concurrent first requests only one becomes the login.
    const login = await trx
      .updateTable('users')
      .set({ last_seen_at: sql`now()`, last_login_at: sql`now()` })
      .where('id', '=', row.id)
      .where((eb) => eb.or([
        eb('last_seen_at', 'is', null),
        eb('last_seen_at', '<', sql<Date>`now() - make_interval(mins => ${LOGIN_IDLE_MINUTES})`),
      ]))
      .returning('id')
      .executeTakeFirst();
    if (login) {
      await recordEvent(trx, {
        eventType: 'UserLogin', message: 'User Login', userId: row.id,
        performedById: row.id, performedByName: displayNameOf(row), stringValue: row.login,
      });
      return;
    }
    await trx.updateTable('users').set({ last_seen_at: sql`now()` }).where('id', '=', row.id).execute();
  });
}
