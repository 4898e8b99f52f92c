/**
 * The web dashboard: sign-in sessions kept as a cookie (only the token's SHA-256 is stored), and the
 * change feed behind `GET /apiv1/Events`: triggers on the records append a row to `change_feed` and NOTIFY
 * `devicelab_changes`, so every hub replica on this database hears every change, whichever process made it, and
 * a client that reconnects with Last-Event-ID is replayed what it missed.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE web_sessions (
      token_sha256 bytea PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL
    );
    CREATE INDEX web_sessions_expiry ON web_sessions (expires_at);

    CREATE TABLE change_feed (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      kind text NOT NULL,
      object_id text NOT NULL,
      changed_at timestamptz NOT NULL DEFAULT now()
    );

    -- Called by the triggers below and by the hub for changes that live outside a table (USB hub ports).
    CREATE FUNCTION note_change(change_kind text, changed_id text) RETURNS void LANGUAGE plpgsql AS $$
    DECLARE seq bigint;
    BEGIN
      INSERT INTO change_feed (kind, object_id) VALUES (change_kind, changed_id) RETURNING id INTO seq;
      PERFORM pg_notify('devicelab_changes', seq::text || ' ' || change_kind || ' ' || changed_id);
    END $$;

    CREATE FUNCTION note_row_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        PERFORM note_change(TG_ARGV[0], OLD.id::text);
      ELSE
        PERFORM note_change(TG_ARGV[0], NEW.id::text);
      END IF;
      RETURN NULL;
    END $$;

    CREATE TRIGGER devices_changed AFTER INSERT OR DELETE ON devices
      FOR EACH ROW EXECUTE FUNCTION note_row_change('device');
    CREATE TRIGGER devices_updated AFTER UPDATE ON devices
      FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION note_row_change('device');
    -- A heartbeat's last_seen_at alone is no change worth pushing.
    CREATE TRIGGER gateways_changed AFTER INSERT OR DELETE ON gateways
      FOR EACH ROW EXECUTE FUNCTION note_row_change('gateway');
    CREATE TRIGGER gateways_updated AFTER UPDATE ON gateways
      FOR EACH ROW WHEN (OLD.connected IS DISTINCT FROM NEW.connected OR OLD.name IS DISTINCT FROM NEW.name
        OR OLD.public_address IS DISTINCT FROM NEW.public_address OR OLD.public_port IS DISTINCT FROM NEW.public_port)
      EXECUTE FUNCTION note_row_change('gateway');
    CREATE TRIGGER async_jobs_changed AFTER INSERT ON async_jobs
      FOR EACH ROW EXECUTE FUNCTION note_row_change('job');
    CREATE TRIGGER async_jobs_updated AFTER UPDATE ON async_jobs
      FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION note_row_change('job');
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER devices_changed ON devices; DROP TRIGGER devices_updated ON devices;
    DROP TRIGGER gateways_changed ON gateways; DROP TRIGGER gateways_updated ON gateways;
    DROP TRIGGER async_jobs_changed ON async_jobs; DROP TRIGGER async_jobs_updated ON async_jobs;
    DROP FUNCTION note_row_change(); DROP FUNCTION note_change(text, text);
    DROP TABLE change_feed; DROP TABLE web_sessions;
  `.execute(db);
}
