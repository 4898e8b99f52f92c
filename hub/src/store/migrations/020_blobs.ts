/**
 * Application binaries in PostgreSQL, so that every hub replica can serve what any replica received.
 * A blob is its `blobs` row (the content address, written last in the transaction that wrote the chunks, so an
 * address is never visible half-written) and its `blob_chunks` (up to 1 MiB each, read one at a time).
 * The chunks are stored EXTERNAL: out of line, never compressed (APKs and IPAs are zip files already).
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE blobs (
      sha256 text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
      byte_count bigint NOT NULL CHECK (byte_count >= 0),
      chunk_count integer NOT NULL CHECK (chunk_count >= 0),
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`
    CREATE TABLE blob_chunks (
      sha256 text NOT NULL REFERENCES blobs (sha256) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
      seq integer NOT NULL CHECK (seq >= 0),
      data bytea NOT NULL,
      PRIMARY KEY (sha256, seq)
    )`.execute(db);
  await sql`ALTER TABLE blob_chunks ALTER COLUMN data SET STORAGE EXTERNAL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE blob_chunks`.execute(db);
  await sql`DROP TABLE blobs`.execute(db);
}
