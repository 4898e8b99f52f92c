/**
 * Metrics (spec 2.5, 4.3; design.md "metrics/"): the four wide typed tables in their own schema `metrics`,
 * partitioned by day on `time` (partitions are created by the store as days come, see
 * hub/src/metrics/partitions.ts), a catalog of fields (fixed ones seeded here, `sample` fields added on first
 * sight), marker periods, the per-device passive-logging switch and the gateways' dropped-rows counter.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE SCHEMA metrics;

    CREATE TABLE metrics.usb_hub (
      device_id uuid NOT NULL, time timestamptz NOT NULL,
      voltage double precision, amperage double precision, wattage double precision,
      usb_state text, charging_profile text, charging_seconds double precision,
      battery_percentage double precision, battery_status text
    ) PARTITION BY RANGE (time);
    CREATE TABLE metrics.log (device_id uuid NOT NULL, time timestamptz NOT NULL, log text) PARTITION BY RANGE (time);
    CREATE TABLE metrics.health_check (
      device_id uuid NOT NULL, time timestamptz NOT NULL,
      elapsed_seconds double precision, is_error boolean, failure_reason text
    ) PARTITION BY RANGE (time);
    CREATE TABLE metrics.sample (device_id uuid NOT NULL, time timestamptz NOT NULL) PARTITION BY RANGE (time);

    CREATE INDEX usb_hub_device_time ON metrics.usb_hub (device_id, time);
    CREATE INDEX log_device_time ON metrics.log (device_id, time);
    CREATE INDEX health_check_device_time ON metrics.health_check (device_id, time);
    CREATE INDEX sample_device_time ON metrics.sample (device_id, time);

    -- Field name as the spec writes it -> column. The only source of identifiers in metrics SQL.
    CREATE TABLE metrics.fields (
      table_name text NOT NULL,
      field text NOT NULL,
      column_name text NOT NULL CHECK (column_name ~ '^[a-z][a-z0-9_]{0,62}$'),
      kind text NOT NULL CHECK (kind IN ('number', 'text', 'flag')),
      position serial NOT NULL,
      PRIMARY KEY (table_name, field),
      UNIQUE (table_name, column_name)
    );
    INSERT INTO metrics.fields (table_name, field, column_name, kind) VALUES
      ('usb_hub', 'voltage', 'voltage', 'number'), ('usb_hub', 'amperage', 'amperage', 'number'),
      ('usb_hub', 'wattage', 'wattage', 'number'), ('usb_hub', 'usb_state', 'usb_state', 'text'),
      ('usb_hub', 'charging_profile', 'charging_profile', 'text'),
      ('usb_hub', 'charging_seconds', 'charging_seconds', 'number'),
      ('usb_hub', 'battery_percentage', 'battery_percentage', 'number'),
      ('usb_hub', 'battery_status', 'battery_status', 'text'),
      ('log', 'log', 'log', 'text'),
      ('health_check', 'elapsed_seconds', 'elapsed_seconds', 'number'),
      ('health_check', 'is_error', 'is_error', 'flag'),
      ('health_check', 'failure_reason', 'failure_reason', 'text');

    CREATE TABLE metrics.markers (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      device_id uuid NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
      name text NOT NULL,
      started_at timestamptz NOT NULL,
      stopped_at timestamptz,
      started_by uuid REFERENCES users(id) ON DELETE SET NULL
    );
    CREATE UNIQUE INDEX markers_open_name ON metrics.markers (device_id, name) WHERE stopped_at IS NULL;
    CREATE INDEX markers_device_name_start ON metrics.markers (device_id, name, started_at DESC);

    ALTER TABLE devices ADD COLUMN metrics_enabled boolean NOT NULL DEFAULT true;
    ALTER TABLE gateways ADD COLUMN metrics_dropped_rows bigint NOT NULL DEFAULT 0;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP SCHEMA metrics CASCADE;
    ALTER TABLE devices DROP COLUMN metrics_enabled;
    ALTER TABLE gateways DROP COLUMN metrics_dropped_rows;
  `.execute(db);
}
