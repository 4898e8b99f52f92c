/** Records of the walking skeleton: users, roles, gateways, devices, applications, async jobs, events. */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE users (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      login text NOT NULL,
      first_name text, middle_name text, last_name text,
      is_active boolean NOT NULL DEFAULT true,
      token_sha256 bytea,
      profile jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_login_at timestamptz
    );
    CREATE UNIQUE INDEX users_login_key ON users (lower(login));
    CREATE UNIQUE INDEX users_token_key ON users (token_sha256);

    CREATE TABLE roles (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      name text NOT NULL,
      entitlements text[] NOT NULL DEFAULT '{}',
      built_in boolean NOT NULL DEFAULT false
    );
    CREATE UNIQUE INDEX roles_name_key ON roles (lower(name));

    CREATE TABLE user_roles (
      user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      role_id uuid NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
      PRIMARY KEY (user_id, role_id)
    );

    CREATE TABLE gateways (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      name text NOT NULL UNIQUE,
      token_sha256 bytea NOT NULL,
      public_address text,
      public_port integer,
      connected boolean NOT NULL DEFAULT false,
      last_seen_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE devices (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      vendor_unique_identifier text NOT NULL UNIQUE,
      gateway_id uuid REFERENCES gateways(id) ON DELETE SET NULL,
      name text NOT NULL,
      operating_system text NOT NULL,
      serial_number text, model text, manufacturer text, friendly_model text,
      operating_system_version text, operating_system_build text,
      product_type text, hardware_model text, device_class text,
      form_factor text NOT NULL DEFAULT 'Unknown',
      vendor_device_name text, mac_address text, bluetooth_address text,
      usb_location text, usb_hub_serial_number text, usb_hub_port_number integer,
      battery_status text NOT NULL DEFAULT 'Unknown',
      battery_percent integer NOT NULL DEFAULT 0,
      disk_space bigint NOT NULL DEFAULT 0,
      disk_space_used bigint NOT NULL DEFAULT 0,
      availability text NOT NULL DEFAULT 'Offline',
      readiness text NOT NULL DEFAULT 'Offline',
      readiness_detail text,
      enabled boolean NOT NULL DEFAULT true,
      deleted boolean NOT NULL DEFAULT false,
      slot_number integer,
      notes text,
      retained_by uuid REFERENCES users(id) ON DELETE SET NULL,
      retained_at timestamptz,
      properties jsonb NOT NULL DEFAULT '[]'::jsonb,
      installed_packages jsonb NOT NULL DEFAULT '[]'::jsonb,
      last_inuse_at timestamptz,
      last_connected_at timestamptz,
      last_disconnected_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX devices_serial_number ON devices (serial_number);
    CREATE INDEX devices_gateway ON devices (gateway_id);

    CREATE TABLE applications (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      display_name text NOT NULL,
      application_identifier text NOT NULL,
      version text, build_version text,
      operating_system text NOT NULL,
      minimum_os_version text,
      blob_sha256 text NOT NULL,
      file_name text NOT NULL,
      file_byte_count bigint NOT NULL,
      version_counter integer NOT NULL,
      icon_blob text,
      vendor_application_name text,
      supported_form_factors text NOT NULL DEFAULT 'Universal',
      provision_expiration_date timestamptz,
      provisions_all_devices boolean NOT NULL DEFAULT false,
      signing_certificate_name text,
      signing_certificate_in_profile boolean NOT NULL DEFAULT false,
      app_team_identifier text,
      agent_dylib_team_identifier text,
      agent_dylib_embedded boolean NOT NULL DEFAULT false,
      launch_activity text,
      application_errors jsonb NOT NULL DEFAULT '[]'::jsonb,
      enabled boolean NOT NULL DEFAULT true,
      notes text,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX applications_identifier ON applications (application_identifier);

    CREATE TABLE async_jobs (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      kind text NOT NULL,
      owner_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      status text NOT NULL DEFAULT 'running',
      result jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      completed_at timestamptz,
      last_polled_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE events (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      event_type text NOT NULL,
      event_date timestamptz NOT NULL DEFAULT clock_timestamp(),
      device_id uuid, device_name text,
      performed_by_id uuid, performed_by_name text,
      user_id uuid,
      application_id uuid, application_name text,
      int_value integer NOT NULL DEFAULT 0,
      bool_value boolean NOT NULL DEFAULT false,
      string_value text,
      message text NOT NULL,
      is_success boolean NOT NULL DEFAULT true,
      device_online_count integer NOT NULL DEFAULT 0,
      device_inuse_count integer NOT NULL DEFAULT 0
    );
    CREATE INDEX events_date ON events (event_date DESC, id);
    CREATE INDEX events_device ON events (device_id, event_date DESC);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE events, async_jobs, applications, devices, gateways, user_roles, roles, users`.execute(db);
}
