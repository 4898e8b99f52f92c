/** Application upload and listing (spec 4.1). */
import { promises as fs } from 'node:fs';
import { sql } from 'kysely';
import { parseGuid, type Application, type DeviceOperatingSystem } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import type { BlobStore } from '../apps/blob-store';
import type { PackageInspector } from '../apps/package-inspector';
import { hasEntitlement, requireEntitlement } from '../auth/entitlements';
import { withTx, type Db } from '../store/database';
import { toApplicationModel } from './application-mapping';
import { readNow, type KeepRead } from './kept-read';
import { readDeferred, type Deferred } from './deferred-input';

export interface UploadInput {
  /** Temporary file holding the binary; removed by uploadApplication whatever happens. */
  path: string;
  originalName: string;
  size: number;
  /** SHA-256 (hex) of the file, computed while it was received. */
  sha256: string;
  operatingSystem: DeviceOperatingSystem;
}

/**
 * Checks and parses the package (in a package worker, with limits), copies the binary into the blob store unless it
 * already holds it, and records the Application. versionCounter counts the uploads of the same
 * applicationIdentifier (this one included). A file that is not a valid package fails with nothing stored.
 */
export async function uploadApplication(
  db: Db, blobs: BlobStore, packages: PackageInspector, user: AuthenticatedUser, file: UploadInput,
): Promise<Application> {
  try {
    requireEntitlement(user, 'ApplicationUpload');
    const meta = await packages.inspect(file.path, file.operatingSystem, user.id);
    const row = await withTx(db, async (trx) => {
      // adopt holds the blob's lock until commit: a concurrent delete cannot remove the binary before this row
      // refers to it. It runs before the identifier's lock, so uploads of one identifier copy in parallel.
      await blobs.adopt(trx, file.path, file.sha256);
      // Serialise uploads of one identifier so versionCounter values are unique and gap-free.
      await sql`select pg_advisory_xact_lock(hashtext(${`app:${meta.applicationIdentifier}`}))`.execute(trx);
      const { count } = await trx.selectFrom('applications')
        .select((eb) => eb.fn.countAll<string>().as('count'))
        .where('application_identifier', '=', meta.applicationIdentifier)
        .executeTakeFirstOrThrow();
      return trx.insertInto('applications').values({
        display_name: meta.displayName,
        application_identifier: meta.applicationIdentifier,
        version: meta.version ?? null,
        build_version: meta.buildVersion ?? null,
        operating_system: meta.operatingSystem,
        minimum_os_version: meta.minimumOperatingSystemVersion ?? null,
        blob_sha256: file.sha256,
        file_name: file.originalName,
        file_byte_count: String(file.size),
        version_counter: Number(count) + 1,
        icon_blob: meta.iconDataUrl ?? null,
        vendor_application_name: meta.displayName,
        supported_form_factors: meta.supportedFormFactors,
        provision_expiration_date: meta.provisionExpirationDate ?? null,
        provisions_all_devices: meta.provisionsAllDevices,
        provisioned_devices: meta.provisionedDevices ? JSON.stringify(meta.provisionedDevices) : null,
        app_team_identifier: meta.appTeamIdentifier ?? null,
        signing_certificate_name: meta.signingCertificateName ?? null,
        signing_certificate_in_profile: meta.signingCertificateInProfile ?? false,
        launch_activity: meta.launchActivity ?? null,
        platform: meta.platform ?? null,
        application_errors: JSON.stringify(meta.applicationErrors),
        uploaded_by_name: user.displayName,
      }).returningAll().executeTakeFirstOrThrow();
    });
    await blobs.keepCopyOf(file.path, file.sha256); // moves the file; the rm below is then a no-op
    return toApplicationModel(row);
  } finally {
    await fs.rm(file.path, { force: true });
  }
}

export interface ApplicationFilters {
  id?: string;
  displayName?: string;
  applicationIdentifier?: string;
  version?: string;
  buildVersion?: string;
  operatingSystem?: DeviceOperatingSystem;
  minimumOperatingSystemVersion?: string;
  applicationBlob?: string;
  originalApplicationBlob?: string;
  fileName?: string;
  /** The C# client's: the Guid or the display name. */
  idOrName?: string;
  /** The C# client's: buildVersion or version. */
  buildVersionOrVersion?: string;
  /** The C# client's name for versionCounter. */
  uploadedVersionCounter?: number;
  provisionsAllDevices?: boolean;
}

/** GET /Application. Without ApplicationList the answer is `[]`. Text filters match case-insensitively. */
export async function listApplications(
  db: Db, user: AuthenticatedUser, applicationFilters: Deferred<ApplicationFilters>, keep: KeepRead = readNow,
): Promise<Application[]> {
  if (!hasEntitlement(user, 'ApplicationList')) return [];
  const filters = readDeferred(applicationFilters);
  // The whole library, which pollers ask for, may be kept between writes; a filtered one is read each time.
  if (Object.values(filters).every((value) => value === undefined)) {
    return keep('applications', () => queryApplications(db, filters));
  }
  return queryApplications(db, filters);
}

async function queryApplications(db: Db, filters: ApplicationFilters): Promise<Application[]> {
  let q = db.selectFrom('applications').selectAll();
  const textFilters = [
    ['display_name', filters.displayName], ['application_identifier', filters.applicationIdentifier],
    ['version', filters.version], ['build_version', filters.buildVersion],
    ['minimum_os_version', filters.minimumOperatingSystemVersion], ['blob_sha256', filters.applicationBlob],
    ['blob_sha256', filters.originalApplicationBlob], ['file_name', filters.fileName],
  ] as const;
  for (const [column, value] of textFilters) {
    if (value !== undefined) q = q.where((eb) => eb(eb.fn('lower', [column]), '=', value.toLowerCase()));
  }
  if (filters.id !== undefined) q = q.where('id', '=', filters.id);
  if (filters.operatingSystem !== undefined) q = q.where('operating_system', '=', filters.operatingSystem);
  if (filters.idOrName !== undefined) {
    const text = filters.idOrName;
    const id = parseGuid(text);
    q = q.where((eb) => eb.or([
      eb(eb.fn('lower', ['display_name']), '=', text.toLowerCase()),
      ...(id ? [eb('id', '=', id)] : []),
    ]));
  }
  if (filters.buildVersionOrVersion !== undefined) {
    const text = filters.buildVersionOrVersion.toLowerCase();
    q = q.where((eb) => eb.or([eb(eb.fn('lower', ['build_version']), '=', text), eb(eb.fn('lower', ['version']), '=', text)]));
  }
  if (filters.uploadedVersionCounter !== undefined) q = q.where('version_counter', '=', filters.uploadedVersionCounter);
  if (filters.provisionsAllDevices !== undefined) q = q.where('provisions_all_devices', '=', filters.provisionsAllDevices);
  const rows = await q.orderBy('created_at', 'desc').orderBy('id').execute();
  return rows.map(toApplicationModel);
}
