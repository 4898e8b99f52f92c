/**
 * The Apple platform an iOS binary is built for (`iphoneos` for devices, `iphonesimulator` for the iOS Simulator,
 * from its Info.plist's DTPlatformName / CFBundleSupportedPlatforms), so that an install onto the wrong kind of
 * device fails before any work. NULL for Android and for uploads made before this column existed.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE applications ADD COLUMN platform text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE applications DROP COLUMN platform`.execute(db);
}
