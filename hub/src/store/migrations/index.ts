/** The one migration set, in order. An in-code provider works under ts-jest and in the build alike. */
import type { Migration, MigrationProvider } from 'kysely';
import * as records from './001_records';
import * as hubSettings from './002_hub_settings';

const migrations: Record<string, Migration> = {
  '001_records': records,
  '002_hub_settings': hubSettings,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
