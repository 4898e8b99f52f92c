/**
 * Which library record an install through the API put on a device, per device and package: several records can
 * share a package and version (the same APK uploaded twice), and matching the device's report by version alone
 * names the newest. A pin lasts while the device reports that package in a version the record matches (the
 * rule of domain/application-mapping.ts `matchManagedApplication`: a version or build either side does not know
 * matches); a report of another version, or without the package, drops it in the same statement.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE installed_records (
    device_id uuid NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
    application_identifier text NOT NULL,
    application_id uuid NOT NULL REFERENCES applications(id) ON DELETE CASCADE,
    PRIMARY KEY (device_id, application_identifier)
  )`.execute(db);
  await sql`CREATE INDEX installed_records_application ON installed_records (application_id)`.execute(db);
  await sql`CREATE FUNCTION drop_stale_installed_records() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM installed_records pin USING applications app
      WHERE pin.device_id = NEW.id AND app.id = pin.application_id AND NOT EXISTS (
        SELECT 1 FROM jsonb_array_elements(NEW.installed_packages) pkg
        WHERE pkg->>'identifier' = pin.application_identifier
          AND (coalesce(app.version, '') = '' OR coalesce(pkg->>'version', '') = '' OR app.version = pkg->>'version')
          AND (coalesce(app.build_version, '') = '' OR coalesce(pkg->>'buildVersion', '') = ''
            OR app.build_version = pkg->>'buildVersion'));
      RETURN NULL;
    END $$`.execute(db);
  await sql`CREATE TRIGGER devices_installed_records AFTER UPDATE OF installed_packages ON devices
    FOR EACH ROW WHEN (OLD.installed_packages IS DISTINCT FROM NEW.installed_packages)
    EXECUTE FUNCTION drop_stale_installed_records()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER devices_installed_records ON devices`.execute(db);
  await sql`DROP FUNCTION drop_stale_installed_records()`.execute(db);
  await sql`DROP TABLE installed_records`.execute(db);
}
