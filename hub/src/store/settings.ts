/** Hub-wide settings (`hub_settings`): values created once and kept across restarts. */
import type { Db } from './database';

/** Returns the stored value of `key`, storing `create()` first when there is none (race-safe). */
export async function settingOrCreate(db: Db, key: string, create: () => string): Promise<string> {
  await db.insertInto('hub_settings').values({ key, value: create() }).onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const row = await db.selectFrom('hub_settings').select('value').where('key', '=', key).executeTakeFirstOrThrow();
  return row.value;
}
