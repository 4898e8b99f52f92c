/**
 * Hub replicas on one PostgreSQL: the replicas that serve the lab (a replica is live while the
 * advisory lock it takes at start is held: fleet/advisory-locks.ts), the commands one replica relays to the
 * replica that owns a gateway's link, and which replica runs each async job (so a starting replica fails only
 * the jobs of dead ones). A gateway's change of replica is a change the event stream hears of.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE hub_replicas (
      id text PRIMARY KEY,
      hostname text NOT NULL,
      version text NOT NULL,
      api_address text,
      link_address text,
      started_at timestamptz NOT NULL DEFAULT now(),
      heartbeat_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE relayed_commands (
      id uuid PRIMARY KEY,
      owner_replica text NOT NULL,
      requester_replica text NOT NULL,
      kind text NOT NULL,
      target text NOT NULL,
      request jsonb NOT NULL,
      deadline timestamptz NOT NULL,
      claimed_at timestamptz,
      answer jsonb,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX relayed_commands_deadline ON relayed_commands (deadline);
    ALTER TABLE async_jobs ADD COLUMN replica_id text;
    DROP TRIGGER gateways_updated ON gateways;
    CREATE TRIGGER gateways_updated AFTER UPDATE ON gateways
      FOR EACH ROW WHEN (OLD.connected IS DISTINCT FROM NEW.connected OR OLD.name IS DISTINCT FROM NEW.name
        OR OLD.public_address IS DISTINCT FROM NEW.public_address OR OLD.public_port IS DISTINCT FROM NEW.public_port
        OR OLD.hub_replica IS DISTINCT FROM NEW.hub_replica)
      EXECUTE FUNCTION note_row_change('gateway');
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER gateways_updated ON gateways;
    CREATE TRIGGER gateways_updated AFTER UPDATE ON gateways
      FOR EACH ROW WHEN (OLD.connected IS DISTINCT FROM NEW.connected OR OLD.name IS DISTINCT FROM NEW.name
        OR OLD.public_address IS DISTINCT FROM NEW.public_address OR OLD.public_port IS DISTINCT FROM NEW.public_port)
      EXECUTE FUNCTION note_row_change('gateway');
    ALTER TABLE async_jobs DROP COLUMN replica_id;
    DROP TABLE relayed_commands;
    DROP TABLE hub_replicas;
  `.execute(db);
}
