/**
 * The current definitions of the database's retain rules: retain and release as one statement each (the rule
 * checks, the row lock, the update, the metrics `session` marker, the DeviceRetained event and the notice to the
 * other hub replicas in one function call; PL/pgSQL so the plans are kept for the connection's life). The
 * migrations that first created these functions are history; this file is what the database runs, applied by
 * `applyRoutines` after every migration. `domain/device-actions.ts` turns the outcomes into the spec's texts.
 *  - A device is named as spec 2.1 says (Guid, then vendor unique identifier, then serial number).
 *  - A retain is refused from the committed row first, without waiting on its lock (losers fail fast); only a
 *    possible winner locks the row and checks again on what the lock found.
 *  - During a booking (reservations, migration 030) only its booker may retain the device.
 *  - A retain by the device's retainer changes nothing (same retain id); a release of a device nobody retains
 *    neither; releasing another user's retain needs `may_release_any` (DeviceReleaseAny, checked by the caller).
 *  - NOTIFY is sent at commit, so no replica hears of a retain that did not commit; NULL `relay_from` tells nobody.
 *  - A release ends by handing the device to the waiting line's next waiter it suits (`hand_over_device`).
 * Signatures here must match the ones the migrations created: changing one needs a migration that drops it.
 */
import { sql } from 'kysely';

export const deviceRetainRoutines = sql`
  -- The lab's counts every event records (Online devices, devices in use), from the narrow device_tallies rows
  -- a trigger keeps in the device's own transaction. except_device leaves one device out, for a statement that
  -- changes it and adds its new state itself (a trigger's effect is not visible inside that statement).
  CREATE OR REPLACE FUNCTION lab_counts(except_device uuid DEFAULT NULL, OUT online int, OUT in_use int)
  LANGUAGE plpgsql STABLE AS $$
  BEGIN
    SELECT count(*) FILTER (WHERE t.online)::int, count(*) FILTER (WHERE t.in_use)::int INTO online, in_use
    FROM device_tallies t WHERE except_device IS NULL OR t.device_id <> except_device;
  END $$;

  -- The event row as domain/events.ts recordEvent writes it (with the lab's counts at that moment), dated when
  -- the retain or release happened, as retained_at and the session marker are.
  CREATE OR REPLACE FUNCTION record_retain_event(device devices, message text, retained boolean,
    performer uuid, performer_name text, subject uuid, at timestamptz) RETURNS void LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO events (event_type, message, device_id, device_name, performed_by_id, performed_by_name, user_id,
      bool_value, device_online_count, device_inuse_count, event_date)
    SELECT 'DeviceRetained', message, device.id, device.name, performer, performer_name, subject, retained,
      c.online, c.in_use, at
    FROM lab_counts() c;
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

  -- The device an identifier names (spec 2.1), as a row of devices; NULL when none.
  CREATE OR REPLACE FUNCTION device_named(identifier text, guid uuid) RETURNS devices LANGUAGE plpgsql STABLE AS $$
  DECLARE
    device devices;
  BEGIN
    -- One index lookup per kind of name, in that order (an OR of the three was planned as three scans and a sort).
    IF guid IS NOT NULL THEN
      SELECT * INTO device FROM devices d WHERE d.id = guid;
      IF FOUND THEN RETURN device; END IF;
    END IF;
    SELECT * INTO device FROM devices d WHERE d.vendor_unique_identifier = identifier;
    IF FOUND THEN RETURN device; END IF;
    SELECT * INTO device FROM devices d WHERE d.serial_number = identifier LIMIT 1;
    IF FOUND THEN RETURN device; END IF;
    RETURN NULL;
  END $$;

  -- Who has booked the device at that moment (reservations never overlap), or NULL.
  CREATE OR REPLACE FUNCTION device_booker(device uuid, at timestamptz) RETURNS uuid LANGUAGE plpgsql STABLE AS $$
  BEGIN
    RETURN (SELECT r.user_id FROM reservations r WHERE r.device_id = device AND r.during @> at);
  END $$;

  -- Why retainer may not use the device now, or NULL; booker: who has booked it now (device_booker), or NULL.
  -- retainRefusal (domain/device-actions.ts) applies the same rule to a row already read;
  -- hub/test/domain/retain-rules.test.ts checks that the two agree.
  CREATE OR REPLACE FUNCTION retain_refusal(device devices, retainer uuid, booker uuid) RETURNS text
  LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
      WHEN device.deleted THEN 'deleted'
      WHEN NOT device.enabled THEN 'disabled'
      WHEN device.retained_by IS NOT NULL AND device.retained_by <> retainer THEN 'in_use'
      WHEN booker IS NOT NULL AND booker <> retainer THEN 'reserved'
      WHEN device.availability <> 'Online' THEN 'offline'
    END
  $$;

  -- The notice fleet/command-relay.ts broadcasts on its channel for a retention change.
  CREATE OR REPLACE FUNCTION relay_retention(relay_from text, device devices) RETURNS void LANGUAGE plpgsql AS $$
  BEGIN
    IF relay_from IS NOT NULL THEN
      PERFORM pg_notify('devicelab_relay', json_build_object('type', 'retention', 'from', relay_from,
        'vendorUniqueIdentifier', device.vendor_unique_identifier)::text);
    END IF;
  END $$;

  CREATE OR REPLACE FUNCTION retain_device(identifier text, guid uuid, retainer uuid, retainer_name text,
    at timestamptz, relay_from text)
  RETURNS device_retain_outcome LANGUAGE plpgsql AS $$
  DECLARE
    device devices;
    booker uuid;
    refusal text;
  BEGIN
    device := device_named(identifier, guid);
    IF device.id IS NULL THEN RETURN retain_outcome('not_found', NULL); END IF;
    booker := device_booker(device.id, at);
    refusal := retain_refusal(device, retainer, booker);
    IF refusal IS NOT NULL THEN RETURN retain_outcome(refusal, device); END IF;
    SELECT * INTO device FROM devices WHERE id = device.id FOR UPDATE;
    refusal := retain_refusal(device, retainer, booker);
    IF refusal IS NOT NULL THEN RETURN retain_outcome(refusal, device); END IF;
    IF device.retained_by = retainer AND device.retained_at IS NOT NULL AND device.retain_id IS NOT NULL THEN
      RETURN retain_outcome('unchanged', device);
    END IF;
    -- retain_id is set by a trigger on devices: a new one for every new retain.
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

  -- reason: the history's text for a release nobody asked for (an idle or expired lease); NULL for a plain one.
  CREATE OR REPLACE FUNCTION release_device(identifier text, guid uuid, releaser uuid, releaser_name text,
    may_release_any boolean, at timestamptz, relay_from text, reason text)
  RETURNS device_retain_outcome LANGUAGE plpgsql AS $$
  DECLARE
    device devices;
    retainer uuid;
  BEGIN
    device := device_named(identifier, guid);
    IF device.id IS NULL THEN RETURN retain_outcome('not_found', NULL); END IF;
    SELECT * INTO device FROM devices WHERE id = device.id FOR UPDATE;
    IF device.retained_by IS NULL THEN RETURN retain_outcome('unchanged', device); END IF;
    IF device.retained_by IS DISTINCT FROM releaser AND NOT may_release_any THEN RETURN retain_outcome('in_use', device); END IF;
    retainer := device.retained_by;
    UPDATE devices SET retained_by = NULL, retained_at = NULL, last_inuse_at = at WHERE id = device.id
      RETURNING * INTO device;
    UPDATE metrics.markers SET stopped_at = greatest(started_at, at)
      WHERE device_id = device.id AND name = 'session' AND stopped_at IS NULL;
    PERFORM record_retain_event(device, coalesce(reason, 'Device Released'), false, releaser, releaser_name, retainer, at);
    PERFORM relay_retention(relay_from, device);
    -- The next waiter it suits has it before this transaction ends (store/routines/waiting-line.ts); the outcome
    -- is the release's, the device as it is now (its new retainer is who the gateway must let in).
    device := hand_over_device(device, at, relay_from);
    RETURN retain_outcome('released', device);
  END $$;
`;
