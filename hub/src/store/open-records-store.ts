/**
 * Opens the records store the way the hub and the CLI both do: an external PostgreSQL when `DATABASE_URL` is
 * set (production), otherwise the embedded one under `DEVICELAB_DATA_DIR` (default `./data`). The database is
 * created when missing and migrated to the latest schema before anyone uses it.
 */
import path from 'node:path';
import type { Logger } from '@devicelab/shared';
import { createDatabase, type Db } from './database';
import { createDatabaseIfMissing, withDatabaseName } from './database-admin';
import { DataDirLockedError } from './data-dir-lock';
import { runningEmbeddedPostgresUrl, startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres';
import { migrateToLatest } from './migrate';

/** Name of the records database inside the embedded cluster. */
export const EMBEDDED_DATABASE_NAME = 'devicelab';

export interface RecordsStoreConfig {
  /** External PostgreSQL; when set, nothing is started locally. */
  databaseUrl?: string;
  /** Data directory for the embedded server (absolute or relative to the working directory). */
  dataDir: string;
  /** Fixed port for the embedded server; free port when omitted. */
  embeddedPort?: number;
  /**
   * When another DeviceLab (the running hub) holds the embedded data dir, connect to its server instead of
   * failing. For short CLI commands; the hub itself must own its server.
   */
  attachToRunningHub?: boolean;
  onPostgresLog?: (line: string) => void;
  /** Logs restarts of an embedded server that died on its own. */
  logger?: Logger;
  /** An embedded server that died could not be restarted (default: exit 1); see startEmbeddedPostgres. */
  onEmbeddedServerLost?: (err: Error) => void;
}

export interface RecordsStore {
  db: Db;
  /** Connection string of the records database (contains credentials: do not log it). */
  url: string;
  /** Set when this process started the embedded server. */
  embedded?: EmbeddedPostgres;
  /** Closes the pool, then stops the embedded server if we started it. Idempotent. */
  stop(): Promise<void>;
}

export async function openRecordsStore(config: RecordsStoreConfig): Promise<RecordsStore> {
  let embedded: EmbeddedPostgres | undefined;
  let url: string;
  if (config.databaseUrl) {
    url = config.databaseUrl;
  } else {
    try {
      embedded = await startEmbeddedPostgres({
        dataDir: config.dataDir,
        port: config.embeddedPort,
        onLog: config.onPostgresLog,
        logger: config.logger,
        onGiveUp: config.onEmbeddedServerLost,
      });
      url = withDatabaseName(embedded.url, EMBEDDED_DATABASE_NAME);
    } catch (err) {
      const running = err instanceof DataDirLockedError && config.attachToRunningHub
        ? await runningEmbeddedPostgresUrl(config.dataDir)
        : undefined;
      if (!running) throw err;
      url = withDatabaseName(running, EMBEDDED_DATABASE_NAME);
    }
  }

  let db: Db | undefined;
  try {
    await createDatabaseIfMissing(url);
    db = createDatabase(url);
    await migrateToLatest(db);
  } catch (err) {
    await db?.destroy().catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
    throw err;
  }

  const opened = db;
  let stopping: Promise<void> | undefined;
  return {
    db: opened,
    url,
    embedded,
    stop() {
      stopping ??= (async () => {
        await opened.destroy();
        await embedded?.stop();
      })();
      return stopping;
    },
  };
}
