/**
 * View-only shares of a device's live screen: a retainer hands out a link (a random token, kept here only as its
 * SHA-256) or names a user. A share stands on the retain it was made in: when that retain ends, the share opens
 * nothing any more (checked against `devices.retain_id`), and the rows go with the next retain's first share or the
 * device. Viewers who join are `SharedViewOnlySessionCreated` events, not rows here.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE screen_shares (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      device_id uuid NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
      retain_id uuid NOT NULL,
      token_sha256 bytea UNIQUE,
      user_id uuid REFERENCES users (id) ON DELETE CASCADE,
      created_by uuid REFERENCES users (id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT screen_shares_link_or_user CHECK ((token_sha256 IS NULL) <> (user_id IS NULL))
    );
    CREATE INDEX screen_shares_by_device ON screen_shares (device_id, retain_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE screen_shares;`.execute(db);
}
