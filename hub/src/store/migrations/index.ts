/** The one migration set, in order. An in-code provider works under ts-jest and in the build alike. */
import type { Migration, MigrationProvider } from 'kysely';
import * as records from './001_records';

const migrations: Record<string, Migration> = {
  '001_records': records,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
