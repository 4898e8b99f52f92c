/**
 * The database's lease rules (table `device_leases`, migration 035), around `retain_device`:
 *  - `retain_lease` is the retain every path uses: a new retain records its lease (name, idle time, end by the
 *    maximum lease length); a repeated retain by the holder is the same lease only under the same lease name (no
 *    name is a name of its own), and counts as use of the device; under another name it is refused ('other_lease').
 *  - The lab's lease settings live in `hub_settings` (domain/lease-settings.ts names the keys and defaults);
 *    a role may carry its own maximum lease length (`roles.max_lease_minutes`); a user's maximum is the most
 *    generous of their roles', a role without one taking the lab's, and none at all when any says none.
 * Signatures here must match the ones the migrations created: changing one needs a migration that drops it.
 */
import { sql } from 'kysely';

export const deviceLeaseRoutines = sql`
  -- A lab lease setting in minutes; fallback when unset or unreadable. PL/pgSQL, as lease_max_minutes below: a SQL
  -- function with a subquery is not inlined, so it would be planned again at every call of every retain.
  CREATE OR REPLACE FUNCTION lease_setting(name text, fallback int) RETURNS int LANGUAGE plpgsql STABLE AS $$
  BEGIN
    RETURN coalesce((SELECT CASE WHEN s.value ~ '^[0-9]{1,6}$' THEN s.value::int END FROM hub_settings s
      WHERE s.key = lease_setting.name), fallback);
  END $$;

  -- The longest lease the user may hold, in minutes; NULL: no maximum.
  CREATE OR REPLACE FUNCTION lease_max_minutes(retainer uuid) RETURNS int LANGUAGE plpgsql STABLE AS $$
  DECLARE
    lab int := nullif(lease_setting('lease.maxLeaseMinutes', 0), 0);
    roles_count int;
    any_unlimited boolean;
    longest int;
  BEGIN
    SELECT count(*), bool_or(p.minutes IS NULL), max(p.minutes) INTO roles_count, any_unlimited, longest
    FROM (SELECT CASE WHEN r.max_lease_minutes IS NULL THEN lab ELSE nullif(r.max_lease_minutes, 0) END AS minutes
      FROM user_roles ur JOIN roles r ON r.id = ur.role_id WHERE ur.user_id = retainer) p;
    IF roles_count = 0 THEN RETURN lab; END IF;
    IF any_unlimited THEN RETURN NULL; END IF;
    RETURN longest;
  END $$;

  CREATE OR REPLACE FUNCTION retain_lease(identifier text, guid uuid, retainer uuid, retainer_name text,
    at timestamptz, relay_from text, lease text, idle int)
  RETURNS device_retain_outcome LANGUAGE plpgsql AS $$
  DECLARE
    result device_retain_outcome;
    current device_leases;
    max_minutes int;
  BEGIN
    result := retain_device(identifier, guid, retainer, retainer_name, at, relay_from);
    IF result.outcome = 'retained' THEN
      max_minutes := lease_max_minutes(retainer);
      INSERT INTO device_leases (device_id, retain_id, user_id, lease_name, started_at, last_used_at, idle_minutes,
        ends_at, warned_at)
      VALUES (result.id, result.retain_id, retainer, coalesce(lease, ''), at, at, idle,
        at + make_interval(mins => max_minutes), NULL)
      ON CONFLICT (device_id) DO UPDATE SET retain_id = excluded.retain_id, user_id = excluded.user_id,
        lease_name = excluded.lease_name, started_at = excluded.started_at, last_used_at = excluded.last_used_at,
        idle_minutes = excluded.idle_minutes, ends_at = excluded.ends_at, warned_at = NULL;
    ELSIF result.outcome = 'unchanged' THEN
      -- A new statement: a lease the concurrent first retain of this device committed is seen here.
      SELECT * INTO current FROM device_leases WHERE device_id = result.id AND retain_id = result.retain_id FOR UPDATE;
      IF current.device_id IS NULL THEN
        -- Retained before leases were recorded: this retain's terms become its lease.
        INSERT INTO device_leases (device_id, retain_id, user_id, lease_name, started_at, last_used_at, idle_minutes)
        VALUES (result.id, result.retain_id, retainer, coalesce(lease, ''), at, at, idle)
        ON CONFLICT (device_id) DO UPDATE SET retain_id = excluded.retain_id, user_id = excluded.user_id,
          lease_name = excluded.lease_name, started_at = excluded.started_at, last_used_at = excluded.last_used_at,
          idle_minutes = excluded.idle_minutes, ends_at = NULL, warned_at = NULL;
      ELSIF current.lease_name <> coalesce(lease, '') THEN
        result.outcome := 'other_lease';
      ELSE
        UPDATE device_leases SET last_used_at = greatest(last_used_at, at), warned_at = NULL,
          idle_minutes = coalesce(idle, idle_minutes)
          WHERE device_id = result.id;
      END IF;
    END IF;
    RETURN result;
  END $$;
`;
