/** Application rows → wire Application model (spec 2.3). */
import { formatWireDate, UNMANAGED_APPLICATION_ID, type Application, type ApplicationFormFactor,
  type DeviceOperatingSystem } from '@devicelab/shared';
import type { ApplicationRow, InstalledPackage } from '../store/schema';

export function toApplicationModel(row: ApplicationRow): Application {
  return {
    id: row.id,
    displayName: row.display_name,
    applicationIdentifier: row.application_identifier,
    version: row.version ?? undefined,
    buildVersion: row.build_version ?? undefined,
    operatingSystem: row.operating_system as DeviceOperatingSystem,
    minimumOperatingSystemVersion: row.minimum_os_version ?? undefined,
    applicationBlob: row.blob_sha256,
    originalApplicationBlob: row.blob_sha256,
    fileName: row.file_name,
    remotePort: 0,
    versionCounter: row.version_counter,
    iconBlob: row.icon_blob ?? undefined,
    fileByteCount: Number(row.file_byte_count),
    vendorApplicationName: row.vendor_application_name ?? undefined,
    provisionExpirationDate: row.provision_expiration_date ? formatWireDate(row.provision_expiration_date) : undefined,
    provisionsAllDevices: row.provisions_all_devices,
    signingCertificateName: row.signing_certificate_name ?? undefined,
    isSigningCertificatePresentInEmbeddedProvisionProfile: row.signing_certificate_in_profile,
    supportedFormFactors: row.supported_form_factors as ApplicationFormFactor,
    applicationErrors: row.application_errors,
    enabled: row.enabled,
    createdDate: formatWireDate(row.created_at),
    appTeamIdentifier: row.app_team_identifier ?? undefined,
    agentDylibTeamIdentifier: row.agent_dylib_team_identifier ?? undefined,
    isAgentDylibEmbeddedInApp: row.agent_dylib_embedded,
    notes: row.notes ?? undefined,
    uploadedByName: row.uploaded_by_name ?? undefined,
  };
}

/** An installed package the service does not manage: the all-zero Guid and what the device reported. */
export function unmanagedApplication(pkg: InstalledPackage, os: DeviceOperatingSystem): Application {
  const model: Partial<Application> = {
    id: UNMANAGED_APPLICATION_ID,
    displayName: pkg.identifier,
    applicationIdentifier: pkg.identifier,
    version: pkg.version || undefined,
    buildVersion: pkg.buildVersion || undefined,
    operatingSystem: os,
    fileName: '',
    remotePort: 0,
    versionCounter: 0,
    fileByteCount: 0,
    provisionsAllDevices: false,
    isSigningCertificatePresentInEmbeddedProvisionProfile: false,
    supportedFormFactors: 'Universal',
    applicationErrors: [],
    enabled: true,
    isAgentDylibEmbeddedInApp: false,
  };
  return model as Application;
}

/**
 * The uploaded Application an installed package corresponds to: same identifier and OS, and the same version and
 * build wherever both sides know them; the latest upload wins.
 */
export function matchManagedApplication(
  pkg: InstalledPackage, os: string, candidates: ApplicationRow[],
): ApplicationRow | undefined {
  const same = (a: string | null, b: string) => !a || !b || a === b;
  return candidates
    .filter((app) => app.application_identifier === pkg.identifier && app.operating_system === os
      && same(app.version, pkg.version) && same(app.build_version, pkg.buildVersion))
    .sort((a, b) => b.version_counter - a.version_counter || b.created_at.getTime() - a.created_at.getTime())[0];
}
