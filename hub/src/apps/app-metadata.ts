/**
 * Metadata of an uploaded application binary, read only after the archive passed the full integrity check
 * (zip-integrity.ts). APK: apk-metadata.ts; IPA: ipa-metadata.ts (top-level app, code signature). A file that is
 * not a valid package is an ApiFailure whose text says what is wrong. Hostile input is bounded twice: by the zip
 * limits here, and by the package worker (package-inspector.ts) that runs this with a heap cap and a deadline.
 */
import { ApiFailure, type ApplicationFormFactor, type DeviceOperatingSystem } from '@devicelab/shared';
import { apkManifestEntry, readApkArchive } from './apk-metadata';
import { ipaInfoPlistEntry, readIpaArchive } from './ipa-metadata';
import { verifyZipIntegrity, type ZipLimits } from './zip-integrity';
import { ZipFormatError, ZipReader } from './zip-reader';

export interface AppMetadata {
  operatingSystem: DeviceOperatingSystem;
  applicationIdentifier: string;
  displayName: string;
  version?: string;
  buildVersion?: string;
  minimumOperatingSystemVersion?: string;
  /** Data URL (`data:image/png;base64,…` or WebP) when the package has a raster icon. */
  iconDataUrl?: string;
  /** iOS: the platform built for, lower case (`iphoneos`, `iphonesimulator`); from DTPlatformName or CFBundleSupportedPlatforms. */
  platform?: string;
  /** Android: fully qualified launcher activity (MAIN/LAUNCHER). */
  launchActivity?: string;
  supportedFormFactors: ApplicationFormFactor;
  provisionExpirationDate?: Date;
  provisionsAllDevices: boolean;
  /** iOS: the UDIDs the embedded profile's ProvisionedDevices lists (absent without a profile). */
  provisionedDevices?: string[];
  appTeamIdentifier?: string;
  /** iOS: common name of the leaf certificate of the executable's code signature. */
  signingCertificateName?: string;
  /** iOS: that certificate (DER) is one of the profile's DeveloperCertificates. */
  signingCertificateInProfile?: boolean;
  applicationErrors: string[];
}

export async function readAppMetadata(
  file: string, operatingSystem: DeviceOperatingSystem, limits: ZipLimits, now: Date = new Date(),
): Promise<AppMetadata> {
  const kind = operatingSystem === 'Android' ? 'APK' : 'IPA';
  let zip: ZipReader | undefined;
  try {
    zip = await ZipReader.open(file, { maxEntries: limits.maxEntries });
    // An archive without the package's main entry is refused by name, before the integrity check inflates it.
    if (operatingSystem === 'Android') apkManifestEntry(zip);
    else ipaInfoPlistEntry(zip);
    await verifyZipIntegrity(zip, file, limits);
    return operatingSystem === 'Android' ? await readApkArchive(zip) : await readIpaArchive(zip, now);
  } catch (err) {
    if (err instanceof ZipFormatError) throw new ApiFailure(`The upload is not a valid ${kind}: ${err.message}.`);
    throw err;
  } finally {
    await zip?.close();
  }
}
