/**
 * Retain and release under contention, the database half (this file holds the functions' current definitions):
 *  - The helpers of migration 022 become PL/pgSQL. As SQL functions called from PL/pgSQL they were parsed and
 *    planned again in every transaction (their cache lives in the caller's per-transaction expression state):
 *    that was most of a refused retain's cost (0.7 ms of server CPU, 0.25 ms now). PL/pgSQL keeps its plans for
 *    the connection's life. Same statements, same results.
 *  - retain_device and release_device tell the other hub replicas about the change themselves (the retention
 *    broadcast of fleet/command-relay.ts, `relay_from` = the calling replica), inside the transaction: NOTIFY is
 *    sent at commit, so no replica hears of a retain that did not commit, and the hub no longer spends a second
 *    round trip and a second NOTIFY commit (PostgreSQL serialises those) on every retain and release.
 *    NULL `relay_from` tells nobody.
 *  - The lab's counts a retain event records (Online devices, devices in use) are counted from `device_tallies`,
 *    one narrow row per device kept by a trigger in the same transaction as the device's change, instead of a scan
 *    of the wide device rows (properties and packages inline): that scan was a third of a retain and release's
 *    server CPU. Same counts, same snapshot.
 */
import { type Kysely, sql } from 'kysely';
import * as retainFunctions from './022_retain_functions';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE device_tallies (
      device_id uuid PRIMARY KEY REFERENCES devices (id) ON DELETE CASCADE,
      online boolean NOT NULL,   -- availability = 'Online' AND NOT deleted
      in_use boolean NOT NULL    -- retained_by IS NOT NULL AND NOT deleted
    );
    INSERT INTO device_tallies (device_id, online, in_use)
      SELECT id, availability = 'Online' AND NOT deleted, retained_by IS NOT NULL AND NOT deleted FROM devices;
    CREATE FUNCTION tally_device() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO device_tallies (device_id, online, in_use)
        VALUES (NEW.id, NEW.availability = 'Online' AND NOT NEW.deleted, NEW.retained_by IS NOT NULL AND NOT NEW.deleted)
        ON CONFLICT (device_id) DO UPDATE SET online = EXCLUDED.online, in_use = EXCLUDED.in_use;
      RETURN NULL;
    END $$;
    CREATE TRIGGER devices_tally_insert AFTER INSERT ON devices FOR EACH ROW EXECUTE FUNCTION tally_device();
    -- Only when a count changes: a device report that rewrites the same availability writes nothing here.
    CREATE TRIGGER devices_tally_update AFTER UPDATE ON devices FOR EACH ROW
      WHEN (OLD.availability IS DISTINCT FROM NEW.availability OR OLD.deleted IS DISTINCT FROM NEW.deleted
        OR (OLD.retained_by IS NULL) IS DISTINCT FROM (NEW.retained_by IS NULL))
      EXECUTE FUNCTION tally_device();

    CREATE OR REPLACE FUNCTION record_retain_event(device devices, message text, retained boolean,
      performer uuid, performer_name text, subject uuid, at timestamptz) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO events (event_type, message, device_id, device_name, performed_by_id, performed_by_name, user_id,
        bool_value, device_online_count, device_inuse_count)
      SELECT 'DeviceRetained', message, device.id, device.name, performer, performer_name, subject, retained,
        count(*) FILTER (WHERE online)::int, count(*) FILTER (WHERE in_use)::int
      FROM device_tallies;
    END $$;

    CREATE OR REPLACE FUNCTION retain_outcome(outcome text, device devices) RETURNS device_retain_outcome
    LANGUAGE plpgsql STABLE AS $$
    BEGIN
      RETURN (SELECT ROW(outcome, device.id, device.name, device.vendor_unique_identifier, device.serial_number,
        device.retained_by, u.login, device.retain_id, device.retained_at, device.enabled, device.deleted,
        g.public_address, g.public_port,
        (SELECT coalesce(jsonb_agg(jsonb_build_object('key', encode(k.key, 'base64'), 'fingerprint', k.fingerprint,
          'comment', k.comment) ORDER BY k.added_at), '[]') FROM user_adb_keys k WHERE k.user_id = device.retained_by)
      )::device_retain_outcome
      FROM (SELECT 1) one
      LEFT JOIN users u ON u.id = device.retained_by
      LEFT JOIN gateways g ON g.id = device.gateway_id);
    END $$;

    CREATE OR REPLACE FUNCTION device_named(identifier text, guid uuid) RETURNS devices LANGUAGE plpgsql STABLE AS $$
    BEGIN
      RETURN (SELECT d FROM devices d
        WHERE d.id = guid OR d.vendor_unique_identifier = identifier OR d.serial_number = identifier
        ORDER BY CASE WHEN d.id = guid THEN 0 WHEN d.vendor_unique_identifier = identifier THEN 1 ELSE 2 END
        LIMIT 1);
    END $$;

    -- The notice fleet/command-relay.ts broadcasts on its channel for a retention change.
    CREATE FUNCTION relay_retention(relay_from text, device devices) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      IF relay_from IS NOT NULL THEN
        PERFORM pg_notify('devicelab_relay', json_build_object('type', 'retention', 'from', relay_from,
          'vendorUniqueIdentifier', device.vendor_unique_identifier)::text);
      END IF;
    END $$;

    DROP FUNCTION retain_device(text, uuid, uuid, text, timestamptz);
    DROP FUNCTION release_device(text, uuid, uuid, text, boolean, timestamptz);

    CREATE FUNCTION retain_device(identifier text, guid uuid, retainer uuid, retainer_name text, at timestamptz,
      relay_from text)
    RETURNS device_retain_outcome LANGUAGE plpgsql AS $$
    DECLARE
      device devices;
      refusal text;
    BEGIN
      device := device_named(identifier, guid);
      IF device.id IS NULL THEN RETURN retain_outcome('not_found', NULL); END IF;
      refusal := retain_refusal(device, retainer);
      IF refusal IS NOT NULL THEN RETURN retain_outcome(refusal, device); END IF;
      SELECT * INTO device FROM devices WHERE id = device.id FOR UPDATE;
      refusal := retain_refusal(device, retainer);
      IF refusal IS NOT NULL THEN RETURN retain_outcome(refusal, device); END IF;
      IF device.retained_by = retainer AND device.retained_at IS NOT NULL AND device.retain_id IS NOT NULL THEN
        RETURN retain_outcome('unchanged', device);
      END IF;
      -- retain_id is set by the trigger of migration 007: a new one for every new retain.
      UPDATE devices SET retained_by = retainer, retained_at = at, last_inuse_at = at WHERE id = device.id
        RETURNING * INTO device;
      -- The metrics session period (metrics/markers.ts): a stale open one ends, this retain's begins.
      UPDATE metrics.markers SET stopped_at = greatest(started_at, at)
        WHERE device_id = device.id AND name = 'session' AND stopped_at IS NULL;
      INSERT INTO metrics.markers (device_id, name, started_at, started_by) VALUES (device.id, 'session', at, retainer);
      PERFORM record_retain_event(device, 'Device Retained', true, retainer, retainer_name, retainer, at);
      PERFORM relay_retention(relay_from, device);
      RETURN retain_outcome('retained', device);
    END $$;

    CREATE FUNCTION release_device(identifier text, guid uuid, releaser uuid, releaser_name text,
      may_release_any boolean, at timestamptz, relay_from text)
    RETURNS device_retain_outcome LANGUAGE plpgsql AS $$
    DECLARE
      device devices;
      retainer uuid;
    BEGIN
      device := device_named(identifier, guid);
      IF device.id IS NULL THEN RETURN retain_outcome('not_found', NULL); END IF;
      SELECT * INTO device FROM devices WHERE id = device.id FOR UPDATE;
      IF device.retained_by IS NULL THEN RETURN retain_outcome('unchanged', device); END IF;
      IF device.retained_by <> releaser AND NOT may_release_any THEN RETURN retain_outcome('in_use', device); END IF;
      retainer := device.retained_by;
      UPDATE devices SET retained_by = NULL, retained_at = NULL, last_inuse_at = at WHERE id = device.id
        RETURNING * INTO device;
      UPDATE metrics.markers SET stopped_at = greatest(started_at, at)
        WHERE device_id = device.id AND name = 'session' AND stopped_at IS NULL;
      PERFORM record_retain_event(device, 'Device Released', false, releaser, releaser_name, retainer, at);
      PERFORM relay_retention(relay_from, device);
      RETURN retain_outcome('released', device);
    END $$;
  `.execute(db);
}

/** Back to migration 022 exactly: its own down and up, after putting back the signatures its down drops. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP FUNCTION retain_device(text, uuid, uuid, text, timestamptz, text);
    DROP FUNCTION release_device(text, uuid, uuid, text, boolean, timestamptz, text);
    DROP FUNCTION relay_retention(text, devices);
    DROP TRIGGER devices_tally_insert ON devices;
    DROP TRIGGER devices_tally_update ON devices;
    DROP FUNCTION tally_device();
    DROP TABLE device_tallies;
    CREATE FUNCTION retain_device(text, uuid, uuid, text, timestamptz) RETURNS device_retain_outcome
      LANGUAGE sql AS 'SELECT NULL::device_retain_outcome';
    CREATE FUNCTION release_device(text, uuid, uuid, text, boolean, timestamptz) RETURNS device_retain_outcome
      LANGUAGE sql AS 'SELECT NULL::device_retain_outcome';
  `.execute(db);
  await retainFunctions.down(db);
  await retainFunctions.up(db);
}
