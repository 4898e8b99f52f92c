/**
 * Metadata of an IPA, read from the top-level app only (`Payload/<Name>.app/`; extensions and nested apps are
 * ignored): Info.plist (binary or XML), the icon (crushed PNGs converted), embedded.mobileprovision and the
 * signing certificate of the executable's code signature.
 */
import type { X509Certificate } from 'node:crypto';
import { ApiFailure, type ApplicationFormFactor } from '@devicelab/shared';
import { signingCertificate, commonName } from './code-signature';
import type { AppMetadata } from './app-metadata';
import { parsePlist, parseXmlPlist, type PlistDict, type PlistValue } from './plist';
import { storedIcon, type StoredIcon } from './app-icon';
import { isPng, pngWidth } from './png-cgbi';
import { ZipReader, type ZipEntry } from './zip-reader';

/** An IPA's top-level app, or a zipped simulator `.app` bundle (the bundle directory at the archive's root). */
const INFO_PLIST = /^(?:Payload\/)?[^/]+\.app\/Info\.plist$/;
const MAX_PLIST_BYTES = 8 * 1024 * 1024;
const MAX_ICON_BYTES = 8 * 1024 * 1024;
const MAX_EXECUTABLE_BYTES = 1024 * 1024 * 1024;

export const IPA_ERRORS = {
  expired: (date: Date) => `The provisioning profile expired on ${wireDate(date)}.`,
  noProfile: 'The application has no embedded provisioning profile.',
  simulator: 'The application is built for the iOS Simulator and cannot be installed on a device.',
  certificateNotInProfile:
    'The signing certificate is not one of the developer certificates of the embedded provisioning profile.',
} as const;

const invalid = (): ApiFailure => new ApiFailure('The file is not a valid iOS application package.');

export async function readIpaMetadata(file: string, now: Date): Promise<AppMetadata> {
  let zip: ZipReader;
  try {
    zip = await ZipReader.open(file);
  } catch {
    throw invalid();
  }
  try {
    return await readIpaArchive(zip, now);
  } finally {
    await zip.close();
  }
}

/** The metadata of an opened IPA; a malformed package is an ApiFailure. */
export async function readIpaArchive(zip: ZipReader, now: Date): Promise<AppMetadata> {
  try {
    return await fromArchive(zip, now);
  } catch (err) {
    if (err instanceof ApiFailure) throw err;
    throw invalid();
  }
}

/** The top-level app's Info.plist entry, looked for by name (before anything is inflated); none: no IPA. */
export function ipaInfoPlistEntry(zip: ZipReader): ZipEntry {
  const plists = zip.entries.filter((e) => INFO_PLIST.test(e.name));
  if (plists.length !== 1) throw invalid();
  return plists[0];
}

async function fromArchive(zip: ZipReader, now: Date): Promise<AppMetadata> {
  const plist = ipaInfoPlistEntry(zip);
  const appDir = plist.name.slice(0, -'Info.plist'.length);
  const info = asDict(parsePlist(await zip.read(plist, MAX_PLIST_BYTES)));
  const identifier = info ? str(info.CFBundleIdentifier) : undefined;
  if (!info || !identifier) throw invalid();

  const profileEntry = zip.find(`${appDir}embedded.mobileprovision`);
  const profile = profileEntry ? readProfile(await zip.read(profileEntry, MAX_PLIST_BYTES)) : undefined;
  const expiration = profile?.ExpirationDate instanceof Date ? profile.ExpirationDate : undefined;
  const teams = profile?.TeamIdentifier;

  const executableName = str(info.CFBundleExecutable);
  const executable = executableName ? zip.find(appDir + executableName) : undefined;
  let signer: X509Certificate | undefined;
  if (executable) {
    try {
      signer = signingCertificate(await zip.read(executable, MAX_EXECUTABLE_BYTES));
    } catch {
      signer = undefined; // an unreadable signature is reported as "no signer", not as a broken upload
    }
  }
  const profileCertificates = Array.isArray(profile?.DeveloperCertificates)
    ? profile.DeveloperCertificates.filter((c): c is Buffer => Buffer.isBuffer(c)) : [];
  const signerInProfile = signer !== undefined && profileCertificates.some((der) => der.equals(signer.raw));

  const platforms = Array.isArray(info.CFBundleSupportedPlatforms) ? info.CFBundleSupportedPlatforms.map(String) : [];
  const platform = (str(info.DTPlatformName) ?? platforms[0])?.toLowerCase();
  const forSimulator = platform === 'iphonesimulator' || platforms.some((p) => p.toLowerCase() === 'iphonesimulator');
  const errors: string[] = [];
  // A simulator build has no profile: the simulator needs none.
  if (!profile && !forSimulator) errors.push(IPA_ERRORS.noProfile);
  if (expiration && expiration.getTime() < now.getTime()) errors.push(IPA_ERRORS.expired(expiration));
  if (signer && profile && !signerInProfile) errors.push(IPA_ERRORS.certificateNotInProfile);
  if (forSimulator) errors.push(IPA_ERRORS.simulator);
  const icon = await readIcon(zip, appDir, info);
  if (icon?.warning) errors.push(icon.warning);

  const displayName = str(info.CFBundleDisplayName) ?? str(info.CFBundleName) ?? identifier;
  return {
    operatingSystem: 'iOS',
    applicationIdentifier: identifier,
    displayName,
    version: str(info.CFBundleShortVersionString),
    buildVersion: str(info.CFBundleVersion),
    minimumOperatingSystemVersion: str(info.MinimumOSVersion),
    platform,
    iconDataUrl: icon?.dataUrl,
    supportedFormFactors: formFactor(info.UIDeviceFamily),
    provisionExpirationDate: expiration,
    provisionsAllDevices: profile?.ProvisionsAllDevices === true,
    provisionedDevices: profile ? provisionedDevices(profile) : undefined,
    appTeamIdentifier: Array.isArray(teams) ? str(teams[0]) : undefined,
    signingCertificateName: signer ? commonName(signer) : undefined,
    signingCertificateInProfile: signerInProfile,
    applicationErrors: errors,
  };
}

/** The profile's ProvisionedDevices UDIDs (bounded: a development profile lists at most a few hundred). */
function provisionedDevices(profile: PlistDict): string[] {
  const list = Array.isArray(profile.ProvisionedDevices) ? profile.ProvisionedDevices : [];
  return list.filter((udid): udid is string => typeof udid === 'string' && udid.length > 0 && udid.length <= 64).slice(0, 10_000);
}

/** The profile is a CMS envelope around an XML plist; the plist is taken from between its markers. */
function readProfile(bytes: Buffer): PlistDict | undefined {
  const text = bytes.toString('latin1');
  const start = text.indexOf('<?xml');
  const end = text.indexOf('</plist>', start);
  if (start < 0 || end < 0) return undefined;
  try {
    return asDict(parseXmlPlist(bytes.subarray(start, end + '</plist>'.length).toString('utf8')));
  } catch {
    return undefined;
  }
}

/** Icon base names of the plist (iPhone and iPad keys, old and new style). */
function iconNames(info: PlistDict): string[] {
  const names: string[] = [];
  for (const key of ['CFBundleIcons', 'CFBundleIcons~ipad']) {
    const primary = asDict(asDict(info[key])?.CFBundlePrimaryIcon);
    const files = primary?.CFBundleIconFiles;
    if (Array.isArray(files)) names.push(...files.map(String));
    const single = str(primary?.CFBundleIconName);
    if (single) names.push(single);
  }
  if (Array.isArray(info.CFBundleIconFiles)) names.push(...info.CFBundleIconFiles.map(String));
  const legacy = str(info.CFBundleIconFile);
  if (legacy) names.push(legacy);
  return names.map((n) => n.replace(/\.png$/i, '')).filter((n) => n !== '');
}

/** The widest PNG in the app directory named after one of the icons, made a browser-viewable stored icon. */
async function readIcon(zip: ZipReader, appDir: string, info: PlistDict): Promise<StoredIcon | undefined> {
  const names = iconNames(info);
  if (names.length === 0) return undefined;
  const candidates: ZipEntry[] = zip.entries.filter((e) => {
    if (!e.name.startsWith(appDir) || !/\.png$/i.test(e.name)) return false;
    const base = e.name.slice(appDir.length);
    return !base.includes('/') && names.some((n) => base.startsWith(n));
  });
  let best: { width: number; png: Buffer } | undefined;
  for (const entry of candidates) {
    try {
      const bytes = await zip.read(entry, MAX_ICON_BYTES);
      if (!isPng(bytes)) continue;
      const width = pngWidth(bytes);
      if (!best || width > best.width) best = { width, png: bytes };
    } catch {
      // an unreadable icon is skipped; the upload does not depend on it
    }
  }
  return best ? storedIcon(best.png) : undefined;
}

function formFactor(family: PlistValue | undefined): ApplicationFormFactor {
  const values = Array.isArray(family) ? family.map(Number) : typeof family === 'number' ? [family] : [];
  const phone = values.includes(1);
  const tablet = values.includes(2);
  if (phone && tablet) return 'Universal';
  if (tablet) return 'Tablet';
  return 'Phone'; // UIDeviceFamily missing means iPhone (Apple's default)
}

function asDict(value: PlistValue | undefined): PlistDict | undefined {
  return value !== undefined && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date)
    && !Buffer.isBuffer(value) ? value as PlistDict : undefined;
}

function str(value: PlistValue | undefined): string | undefined {
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const s = String(value).trim();
  return s === '' ? undefined : s;
}

function wireDate(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
