/**
 * Retain and release as one statement each (migration 025 redefines these functions; read them there): the rule
 * checks, the row lock, the update, the metrics `session` marker and the DeviceRetained event in one function call,
 * so a retain is one round trip instead of about twelve and the device row is locked only for the time the database
 * itself needs. The rules are those of `domain/device-actions.ts`, which turns the outcome into the spec's texts:
 *  - a device is named as spec 2.1 says (Guid, then vendor unique identifier, then serial number);
 *  - a retain is refused from the committed row first, without waiting on its lock (losers fail fast), and only
 *    a possible winner locks the row and checks again on what the lock found;
 *  - a retain by the device's retainer changes nothing (same retain id); a release of a device nobody retains
 *    neither; releasing another user's retain needs `may_release_any` (DeviceReleaseAny, checked by the caller).
 * Both return the device as the caller needs it for the answer and for telling its gateway who may open it
 * (retain id, retainer login, the retainer's adb keys), so nothing is read again after the call.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TYPE device_retain_outcome AS (
      outcome text, -- retained | unchanged | released | not_found | deleted | disabled | in_use | offline
      id uuid, name text, vendor_unique_identifier text, serial_number text,
      retained_by uuid, retainer_login text, retain_id uuid, retained_at timestamptz,
      enabled boolean, deleted boolean, gateway_public_address text, gateway_public_port integer,
      retainer_adb_keys jsonb
    );

    -- The event row as domain/events.ts recordEvent writes it (with the lab's counts at that moment).
    CREATE FUNCTION record_retain_event(device devices, message text, retained boolean,
      performer uuid, performer_name text, subject uuid, at timestamptz) RETURNS void LANGUAGE sql AS $$
      INSERT INTO events (event_type, message, device_id, device_name, performed_by_id, performed_by_name, user_id,
        bool_value, device_online_count, device_inuse_count)
      SELECT 'DeviceRetained', message, device.id, device.name, performer, performer_name, subject, retained,
        count(*) FILTER (WHERE availability = 'Online' AND NOT deleted)::int,
        count(*) FILTER (WHERE retained_by IS NOT NULL AND NOT deleted)::int
      FROM devices
    $$;

    CREATE FUNCTION retain_outcome(outcome text, device devices) RETURNS device_retain_outcome LANGUAGE sql STABLE AS $$
      SELECT ROW(outcome, device.id, device.name, device.vendor_unique_identifier, device.serial_number,
        device.retained_by, u.login, device.retain_id, device.retained_at, device.enabled, device.deleted,
        g.public_address, g.public_port,
        (SELECT coalesce(jsonb_agg(jsonb_build_object('key', encode(k.key, 'base64'), 'fingerprint', k.fingerprint,
          'comment', k.comment) ORDER BY k.added_at), '[]') FROM user_adb_keys k WHERE k.user_id = device.retained_by)
      )::device_retain_outcome
      FROM (SELECT 1) one
      LEFT JOIN users u ON u.id = device.retained_by
      LEFT JOIN gateways g ON g.id = device.gateway_id
    $$;

    -- The device an identifier names (spec 2.1), as a row of devices; NULL when none.
    CREATE FUNCTION device_named(identifier text, guid uuid) RETURNS devices LANGUAGE sql STABLE AS $$
      SELECT d FROM devices d
      WHERE d.id = guid OR d.vendor_unique_identifier = identifier OR d.serial_number = identifier
      ORDER BY CASE WHEN d.id = guid THEN 0 WHEN d.vendor_unique_identifier = identifier THEN 1 ELSE 2 END
      LIMIT 1
    $$;

    CREATE FUNCTION retain_refusal(device devices, retainer uuid) RETURNS text LANGUAGE sql IMMUTABLE AS $$
      SELECT CASE
        WHEN device.deleted THEN 'deleted'
        WHEN NOT device.enabled THEN 'disabled'
        WHEN device.retained_by IS NOT NULL AND device.retained_by <> retainer THEN 'in_use'
        WHEN device.availability <> 'Online' THEN 'offline'
      END
    $$;

    CREATE FUNCTION retain_device(identifier text, guid uuid, retainer uuid, retainer_name text, at timestamptz)
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
      RETURN retain_outcome('retained', device);
    END $$;

    CREATE FUNCTION release_device(identifier text, guid uuid, releaser uuid, releaser_name text,
      may_release_any boolean, at timestamptz)
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
      RETURN retain_outcome('released', device);
    END $$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP FUNCTION release_device(text, uuid, uuid, text, boolean, timestamptz);
    DROP FUNCTION retain_device(text, uuid, uuid, text, timestamptz);
    DROP FUNCTION retain_refusal(devices, uuid);
    DROP FUNCTION device_named(text, uuid);
    DROP FUNCTION retain_outcome(text, devices);
    DROP FUNCTION record_retain_event(devices, text, boolean, uuid, text, uuid, timestamptz);
    DROP TYPE device_retain_outcome;
  `.execute(db);
}
