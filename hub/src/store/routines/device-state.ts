/**
 * The current definitions of how a gateway's report moves a device's state, for the statements that apply a
 * report in the database (gateways/device-inventory.ts). `nextReadiness` and `availabilityOf` there are the same
 * rules for a row already read; hub/test/domain/retain-rules.test.ts checks that the two agree.
 */
import { sql } from 'kysely';

export const deviceStateRoutines = sql`
  -- The hub's own Rebooting (set when it reboots a device) holds until the gateway reports the device Ready.
  CREATE OR REPLACE FUNCTION next_readiness(current_readiness text, reported text) RETURNS text
  LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN current_readiness = 'Rebooting' AND coalesce(reported, '') <> 'Ready' THEN 'Rebooting'
      ELSE coalesce(nullif(reported, ''), 'Offline') END
  $$;

  -- A device is Online exactly when its readiness is Ready.
  CREATE OR REPLACE FUNCTION availability_of(readiness text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN readiness = 'Ready' THEN 'Online' ELSE 'Offline' END
  $$;
`;
