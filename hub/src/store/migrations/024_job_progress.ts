/**
 * Determinate progress of async jobs: how far a running install is, in percent, as its gateway reports
 * it. Kept on the job's row so `/Async` on any replica answers it, and pushed on the event stream: the job trigger
 * now also fires when the progress changes.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE async_jobs ADD COLUMN progress smallint CHECK (progress BETWEEN 0 AND 100);
    DROP TRIGGER async_jobs_updated ON async_jobs;
    CREATE TRIGGER async_jobs_updated AFTER UPDATE ON async_jobs
      FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.progress IS DISTINCT FROM NEW.progress)
      EXECUTE FUNCTION note_row_change('job');
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER async_jobs_updated ON async_jobs;
    CREATE TRIGGER async_jobs_updated AFTER UPDATE ON async_jobs
      FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION note_row_change('job');
    ALTER TABLE async_jobs DROP COLUMN progress;
  `.execute(db);
}
