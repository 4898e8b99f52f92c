/**
 * Webhooks: endpoints administrators register, and a delivery queue filled by a trigger on
 * `events`, so every event recorded in any transaction, by any code path or replica, is queued in that same
 * transaction (at least once) or not at all. Deliveries are taken with FOR UPDATE SKIP LOCKED and a lease
 * (`claimed_until`), so any number of hub processes can work the queue.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE webhooks (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      url text NOT NULL,
      event_types text[] NOT NULL DEFAULT '{}',
      secret text NOT NULL,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE webhook_deliveries (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      webhook_id uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
      event_id uuid NOT NULL REFERENCES events (id) ON DELETE CASCADE,
      event_type text NOT NULL,
      order_key text NOT NULL,
      status text NOT NULL DEFAULT 'pending',
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      claimed_until timestamptz,
      last_status_code integer,
      last_error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      delivered_at timestamptz
    );
    CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (webhook_id, order_key, id) WHERE status = 'pending';
    CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, id DESC);
    CREATE FUNCTION queue_webhook_deliveries() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, order_key)
        SELECT w.id, NEW.id, NEW.event_type, coalesce(NEW.device_id::text, '')
        FROM webhooks w
        WHERE cardinality(w.event_types) = 0 OR NEW.event_type = ANY (w.event_types)
        ORDER BY w.id;
      RETURN NEW;
    END $$;
    CREATE TRIGGER events_queue_webhooks AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION queue_webhook_deliveries();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER events_queue_webhooks ON events;
    DROP FUNCTION queue_webhook_deliveries();
    DROP TABLE webhook_deliveries;
    DROP TABLE webhooks;
  `.execute(db);
}
