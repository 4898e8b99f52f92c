/**
 * The UDIDs an uploaded IPA's provisioning profile lists (`ProvisionedDevices`), so that an install is refused
 * before any byte moves when the profile does not provision the device. NULL: no profile read (APKs, and IPAs
 * uploaded before this column existed: their installs are not checked against a device list).
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE applications ADD COLUMN provisioned_devices jsonb`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE applications DROP COLUMN provisioned_devices`.execute(db);
}
