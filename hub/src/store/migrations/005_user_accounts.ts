/**
 * User accounts beyond the skeleton: a password hash (scrypt, for other tools' UI logins; the API itself
 * authenticates with tokens), the time of the last authenticated request (to tell a new login from an ongoing
 * session), and free-form user properties (spec UserProperty), kept in the order they were given.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE users ADD COLUMN password_hash text, ADD COLUMN last_seen_at timestamptz;
    CREATE TABLE user_properties (
      user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      name text NOT NULL,
      value text NOT NULL,
      position integer NOT NULL,
      PRIMARY KEY (user_id, name)
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE user_properties;
    ALTER TABLE users DROP COLUMN password_hash, DROP COLUMN last_seen_at;
  `.execute(db);
}
