/**
 * The automation session map: each WebDriver session the hub relays, under the id the device's Appium server gave
 * it, with the device (and the retain it holds it by), its user, the request id its creation carried (the
 * gateway's log ties the lines before the session id to it), the last command's time and the idle limit. Kept in
 * PostgreSQL so that any hub replica relays a session and a restart loses none. At most one open session per
 * device. A change re-stamps its device (migration 014), so the kept device lists show the session at once.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE automation_sessions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      session_id text NOT NULL,
      device_id uuid NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
      vendor_unique_identifier text NOT NULL,
      gateway_id uuid,
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      retain_id uuid NOT NULL,
      request_id uuid NOT NULL,
      created_at timestamptz NOT NULL,
      last_command_at timestamptz NOT NULL,
      new_command_timeout_s integer NOT NULL CHECK (new_command_timeout_s >= 0),
      state text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'closing', 'closed')),
      ended_at timestamptz,
      end_reason text
    );
    CREATE UNIQUE INDEX automation_sessions_live_id ON automation_sessions (session_id) WHERE state <> 'closed';
    CREATE UNIQUE INDEX automation_sessions_live_device ON automation_sessions (device_id) WHERE state <> 'closed';
    CREATE INDEX automation_sessions_by_device ON automation_sessions (device_id, created_at DESC);
    CREATE FUNCTION stamp_automated_device() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'UPDATE' AND OLD.state IS NOT DISTINCT FROM NEW.state THEN RETURN NULL; END IF;
      UPDATE devices SET list_change = nextval('list_changes') WHERE id = NEW.device_id;
      RETURN NULL;
    END $$;
    CREATE TRIGGER automation_sessions_list_change AFTER INSERT OR UPDATE ON automation_sessions
      FOR EACH ROW EXECUTE FUNCTION stamp_automated_device();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE automation_sessions; DROP FUNCTION stamp_automated_device();`.execute(db);
}
