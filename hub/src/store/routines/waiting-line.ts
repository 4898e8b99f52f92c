/**
 * The waiting line's rules in the database (table `device_waiters`, migrations 034 and 039):
 *  - `device_matches_filter` is the filter people type (shared/src/device-filter.ts `matchesDeviceFilter`) read
 *    from the parsed filter kept with each waiter (`filter_terms`); hub/test/domain/line-filter-rules.test.ts
 *    checks that the two agree on every key.
 *  - `hand_over_device` is what every release does at its end (`release_device`, whatever freed the device: the
 *    holder, an admin, an idle or ended lease, a waiter that left): the device is retained for the earliest waiter
 *    it suits, in the release's own transaction, so no other request can take it in between and nothing waits for
 *    a notice to travel. Waiters another transaction is assigning are skipped (SKIP LOCKED), never waited for.
 *  - `serve_waiting_line` is a pass over the whole line for what frees a device without a release (a device coming
 *    Online or enabled, a booking that ended, a request joining): each waiter in order takes the best free device it
 *    suits (fullest battery, then name), under the line's advisory lock so passes of two replicas never overlap.
 *  - A waiter's replica is told at commit on the replicas' relay channel (`lineHandOver`), and answers at once.
 * Signatures here must match the ones the migrations created: changing one needs a migration that drops it.
 */
import { sql } from 'kysely';
import { LockKind } from '../../fleet/advisory-locks';

export const waitingLineRoutines = sql`
  -- A version's numbers as compareVersions reads them: split at . - _ or space, a part's leading digits, else 0.
  CREATE OR REPLACE FUNCTION version_numbers(version text) RETURNS numeric[] LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(array_agg(coalesce(substring(p.part FROM '^[[:space:]]*[+]?([[:digit:]]+)')::numeric, 0) ORDER BY p.n), '{}')
    FROM regexp_split_to_table(version, '[._ -]') WITH ORDINALITY AS p(part, n)
  $$;

  -- compareVersions: -1, 0 or 1; a missing part is 0 (13 = 13.0).
  CREATE OR REPLACE FUNCTION compare_versions(a text, b text) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$
  DECLARE
    pa numeric[] := version_numbers(a);
    pb numeric[] := version_numbers(b);
  BEGIN
    FOR i IN 1 .. greatest(cardinality(pa), cardinality(pb)) LOOP
      IF coalesce(pa[i], 0) <> coalesce(pb[i], 0) THEN RETURN sign(coalesce(pa[i], 0) - coalesce(pb[i], 0))::int; END IF;
    END LOOP;
    RETURN 0;
  END $$;

  -- versionHasPrefix: 14.1 is a prefix of 14.1.2, not of 14.10.
  CREATE OR REPLACE FUNCTION version_has_prefix(version text, prefix text) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(bool_and(coalesce(
      substring((string_to_array(version, '.'))[w.n] FROM '^[[:space:]]*[+]?([[:digit:]]+)')::numeric = w.part::numeric, false)), true)
    FROM unnest(string_to_array(prefix, '.')) WITH ORDINALITY AS w(part, n)
  $$;

  -- Free: what a retain could get now (isFreeDevice).
  CREATE OR REPLACE FUNCTION device_is_free(device devices) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
    SELECT device.availability = 'Online' AND device.enabled AND NOT device.deleted AND device.retained_by IS NULL
  $$;

  -- matchesDeviceFilter for a device row and a parsed filter (DeviceFilter as JSON); NULL terms match nothing.
  CREATE OR REPLACE FUNCTION device_matches_filter(device devices, terms jsonb) RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT terms IS NOT NULL AND NOT device.deleted
      AND (terms->>'os' IS NULL OR device.operating_system = terms->>'os')
      AND (terms->>'minOs' IS NULL OR (coalesce(device.operating_system_version, '') <> ''
        AND compare_versions(device.operating_system_version, terms->>'minOs') >= 0))
      AND (terms->>'maxOs' IS NULL OR (coalesce(device.operating_system_version, '') <> ''
        AND compare_versions(array_to_string((string_to_array(device.operating_system_version, '.'))
          [1:cardinality(string_to_array(terms->>'maxOs', '.'))], '.'), terms->>'maxOs') <= 0))
      AND (terms->>'osVersion' IS NULL OR version_has_prefix(coalesce(device.operating_system_version, ''), terms->>'osVersion'))
      AND (terms->>'model' IS NULL OR strpos(lower(coalesce(device.model, '')), lower(terms->>'model')) > 0
        OR strpos(lower(coalesce(device.friendly_model, '')), lower(terms->>'model')) > 0
        OR strpos(lower(coalesce(device.manufacturer, '')), lower(terms->>'model')) > 0)
      AND (terms->>'name' IS NULL OR strpos(lower(coalesce(device.name, '')), lower(terms->>'name')) > 0)
      AND (terms->>'id' IS NULL OR lower(terms->>'id') IN (lower(device.id::text), lower(device.serial_number),
        lower(device.vendor_unique_identifier)))
      AND (terms->>'formFactor' IS NULL OR lower(coalesce(device.form_factor, '')) = lower(terms->>'formFactor'))
      AND (terms->>'app' IS NULL OR device.installed_packages @> jsonb_build_array(jsonb_build_object('identifier', terms->>'app')))
      AND (terms->>'online' IS NULL OR (device.availability = 'Online') = (terms->>'online')::boolean)
      AND (terms->>'free' IS NULL OR device_is_free(device) = (terms->>'free')::boolean)
  $$;

  -- Whether the waiter would take the device: its filter (or the one device it named), and no one else's booking.
  CREATE OR REPLACE FUNCTION waiter_takes(device devices, waiter device_waiters, booker uuid) RETURNS boolean
  LANGUAGE sql STABLE AS $$
    SELECT (booker IS NULL OR booker = waiter.user_id) AND CASE WHEN waiter.device_id IS NOT NULL
      THEN waiter.device_id = device.id ELSE device_matches_filter(device, waiter.filter_terms) END
  $$;

  -- Assigns the device to the waiter and retains it for them, telling the waiter's replica at commit; false when
  -- the waiter was assigned meanwhile or the retain was refused (nothing changed then).
  CREATE OR REPLACE FUNCTION line_retain_for(waiter device_waiters, handed uuid, at timestamptz, relay_from text)
  RETURNS boolean LANGUAGE plpgsql AS $$
  DECLARE
    result device_retain_outcome;
  BEGIN
    -- The row first: a request leaving now either deleted it already or waits for this transaction and then finds
    -- the device it must give back.
    UPDATE device_waiters SET assigned_device = handed, assigned_at = at WHERE id = waiter.id AND assigned_device IS NULL;
    IF NOT FOUND THEN RETURN false; END IF;
    result := retain_lease(handed::text, handed, waiter.user_id, waiter.user_name, at, relay_from, waiter.lease_name,
      waiter.idle_minutes);
    IF result.outcome = 'retained' THEN
      -- A test run's WebDriver session: its retain event says so (history and usage records show it).
      IF waiter.purpose = 'automation' THEN
        UPDATE events SET automation_session = true WHERE id = (SELECT id FROM events WHERE device_id = handed
          AND event_type = 'DeviceRetained' AND bool_value ORDER BY seq DESC LIMIT 1);
      END IF;
      -- With what the waiter's ticket needs (the adb keys left out: a notice holds at most 8000 bytes).
      PERFORM pg_notify('devicelab_relay', jsonb_build_object('type', 'lineHandOver', 'to', waiter.replica_id,
        'waiter', waiter.id, 'device', handed, 'retain', to_jsonb(result) - 'retainer_adb_keys')::text);
      RETURN true;
    END IF;
    UPDATE device_waiters SET assigned_device = NULL, assigned_at = NULL WHERE id = waiter.id;
    RETURN false;
  END $$;

  -- The end of every release: the device, when free, retained for the earliest waiter it suits. Returns the
  -- device as it is now (retained by that waiter, or as it was).
  CREATE OR REPLACE FUNCTION hand_over_device(device devices, at timestamptz, relay_from text) RETURNS devices
  LANGUAGE plpgsql AS $$
  DECLARE
    booker uuid;
    candidate device_waiters;
    passed bigint := 0;
    waiter device_waiters;
  BEGIN
    IF NOT device_is_free(device) THEN RETURN device; END IF;
    booker := device_booker(device.id, at);
    -- The line in order, one waiter at a time from the index on place, stopping at the first the device suits (a
    -- single statement with the filter in its WHERE was planned to test every waiter and sort them); only the
    -- waiter taken is locked, and one another transaction holds is skipped, never waited for.
    LOOP
      SELECT * INTO candidate FROM device_waiters w WHERE w.assigned_device IS NULL AND w.place > passed
        ORDER BY w.place LIMIT 1;
      EXIT WHEN NOT FOUND;
      passed := candidate.place;
      CONTINUE WHEN NOT waiter_takes(device, candidate, booker);
      SELECT * INTO waiter FROM device_waiters w
        WHERE w.id = candidate.id AND w.assigned_device IS NULL AND waiter_takes(device, w, booker)
        FOR UPDATE SKIP LOCKED;
      EXIT WHEN waiter.id IS NOT NULL;
    END LOOP;
    IF waiter.id IS NULL OR NOT line_retain_for(waiter, device.id, at, relay_from) THEN RETURN device; END IF;
    SELECT * INTO device FROM devices d WHERE d.id = device.id;
    RETURN device;
  END $$;

  -- One pass over the line; how many waiters it served.
  CREATE OR REPLACE FUNCTION serve_waiting_line(at timestamptz, relay_from text) RETURNS int LANGUAGE plpgsql AS $$
  DECLARE
    waiter device_waiters;
    device devices;
    served int := 0;
  BEGIN
    IF NOT EXISTS (SELECT 1 FROM device_waiters w WHERE w.assigned_device IS NULL)
      OR NOT EXISTS (SELECT 1 FROM devices d WHERE device_is_free(d)) THEN
      RETURN 0;
    END IF;
    PERFORM pg_advisory_xact_lock(${sql.lit(LockKind.waitingLine)}, 0);
    FOR waiter IN SELECT * FROM device_waiters w WHERE w.assigned_device IS NULL ORDER BY w.place LOOP
      SELECT * INTO device FROM devices d
        WHERE device_is_free(d) AND waiter_takes(d, waiter, device_booker(d.id, at))
        ORDER BY d.battery_percent DESC, d.name LIMIT 1;
      IF device.id IS NULL THEN
        EXIT WHEN NOT EXISTS (SELECT 1 FROM devices d WHERE device_is_free(d));
        CONTINUE;
      END IF;
      IF line_retain_for(waiter, device.id, at, relay_from) THEN served := served + 1; END IF;
    END LOOP;
    RETURN served;
  END $$;
`;
