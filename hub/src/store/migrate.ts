/** Brings a records database to the latest schema with the one in-code migration set. */
import { Migrator, type MigrationResult } from 'kysely';
import type { Db } from './database';
import { migrationProvider } from './migrations';
import { applyRoutines } from './routines';
import { attachTableChangeNotices } from './table-change-notices';

/**
 * Applies every pending migration in order, then the current database routines (`routines/`), then gives every new
 * table its change-notice trigger. kysely's Migrator
 * takes an advisory lock, so two hubs starting on one database do not race. Throws (with the failing migration
 * named) when any migration fails.
 */
export async function migrateToLatest(db: Db): Promise<MigrationResult[]> {
  // Numbers are reserved per feature (008 USB hubs, 009 metrics) and may land out of order: a database that
  // already ran 009 must still accept 008 later.
  const migrator = new Migrator({ db, provider: migrationProvider, allowUnorderedMigrations: true });
  const { error, results = [] } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results.find((r) => r.status === 'Error')?.migrationName;
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`records migration ${failed ?? '(before any migration)'} failed: ${reason}`, { cause: error });
  }
  await applyRoutines(db);
  await attachTableChangeNotices(db);
  return results;
}
