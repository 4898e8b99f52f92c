/**
 * Database routines kept as current files: each rule the database applies is defined once, here, instead of in
 * the migration that first created it and every migration that replaced it since. `applyRoutines` runs after the
 * migrations at every start and replaces the routines when their text changed. A change of a routine's signature
 * or return type still needs a migration that drops the old one (CREATE OR REPLACE cannot change those).
 */
import { createHash } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import { LockKind } from '../../fleet/advisory-locks';
import { withTx, type Db } from '../database';
import { deviceLeaseRoutines } from './device-lease';
import { deviceRetainRoutines } from './device-retain';
import { deviceStateRoutines } from './device-state';
import { waitingLineRoutines } from './waiting-line';

/** In dependency order: a routine's callees come first. */
const ROUTINES: RawBuilder<unknown>[] = [deviceStateRoutines, deviceRetainRoutines, deviceLeaseRoutines, waitingLineRoutines];

const DIGEST_KEY = 'routines_digest';

export async function applyRoutines(db: Db): Promise<void> {
  const texts = ROUTINES.map((routine) => routine.compile(db).sql);
  const digest = createHash('sha256').update(texts.join('\n')).digest('hex');
  await withTx(db, async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(${sql.lit(LockKind.routines)}, 0)`.execute(trx);
    const stored = await trx.selectFrom('hub_settings').select('value').where('key', '=', DIGEST_KEY).executeTakeFirst();
    // Replacing a function invalidates every connection's cached plans of it: only when the text really changed.
    if (stored?.value === digest) return;
    for (const text of texts) await sql.raw(text).execute(trx);
    await trx.insertInto('hub_settings').values({ key: DIGEST_KEY, value: digest })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value: digest })).execute();
  });
}
