/**
 * adb public keys a user registered: the gateway lets a connection into a retained device's adb
 * endpoint only with a key of the retainer. `key` is Android's RSAPublicKey struct; `fingerprint` is its MD5.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE user_adb_keys (
      user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      fingerprint text NOT NULL,
      key bytea NOT NULL,
      comment text NOT NULL DEFAULT '',
      added_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (user_id, fingerprint)
    )
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE user_adb_keys`.execute(db);
}
