/**
 * Who uploaded each library entry, by name as it read at upload: two uploads of one APK differ in version counter,
 * date and uploader, and the library shows all three. A name, not a reference, so the entry keeps it when the user
 * is renamed or deleted; uploads before this migration have none.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE applications ADD COLUMN uploaded_by_name text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE applications DROP COLUMN uploaded_by_name`.execute(db);
}
