/**
 * Metadata of an uploaded application binary. APK: read with app-info-parser (package, versionName/versionCode,
 * minSdk, label resolved through resources.arsc, icon, launcher activity). IPA: our own reader (ipa-metadata.ts),
 * which keeps to the top-level app and reads the code signature. A file that is not a valid package is an ApiFailure.
 */
import { ApiFailure, type ApplicationFormFactor, type DeviceOperatingSystem } from '@devicelab/shared';
import { readIpaMetadata } from './ipa-metadata';

// app-info-parser ships no types; this is the part of its surface used here.
type ParserCtor = new (file: string) => { parse(): Promise<Record<string, unknown>> };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const ApkParser = require('app-info-parser/src/apk') as ParserCtor;

export interface AppMetadata {
  operatingSystem: DeviceOperatingSystem;
  applicationIdentifier: string;
  displayName: string;
  version?: string;
  buildVersion?: string;
  minimumOperatingSystemVersion?: string;
  /** Data URL (`data:image/png;base64,…` or WebP) when the package has a raster icon. */
  iconDataUrl?: string;
  /** Android: fully qualified launcher activity (MAIN/LAUNCHER). */
  launchActivity?: string;
  supportedFormFactors: ApplicationFormFactor;
  provisionExpirationDate?: Date;
  provisionsAllDevices: boolean;
  appTeamIdentifier?: string;
  /** iOS: common name of the leaf certificate of the executable's code signature. */
  signingCertificateName?: string;
  /** iOS: that certificate (DER) is one of the profile's DeveloperCertificates. */
  signingCertificateInProfile?: boolean;
  applicationErrors: string[];
}

export async function readAppMetadata(
  file: string, operatingSystem: DeviceOperatingSystem, now: Date = new Date(),
): Promise<AppMetadata> {
  if (operatingSystem !== 'Android') return readIpaMetadata(file, now);
  let info: Record<string, unknown>;
  try {
    info = await new ApkParser(file).parse();
  } catch {
    throw new ApiFailure('The file is not a valid Android application package.');
  }
  const metadata = fromApk(info);
  if (!metadata) throw new ApiFailure('The file is not a valid Android application package.');
  return metadata;
}

function fromApk(info: Record<string, unknown>): AppMetadata | undefined {
  const pkg = text(info.package);
  if (!pkg) return undefined;
  const app = (info.application ?? {}) as Record<string, unknown>;
  const usesSdk = (info.usesSdk ?? {}) as Record<string, unknown>;
  const launchers = (app.launcherActivities ?? []) as { name?: unknown }[];
  const launcher = text(launchers[0]?.name);
  return {
    operatingSystem: 'Android',
    applicationIdentifier: pkg,
    displayName: resourceText(app.label) ?? pkg,
    version: text(info.versionName),
    buildVersion: text(info.versionCode),
    minimumOperatingSystemVersion: text(usesSdk.minSdkVersion),
    iconDataUrl: rasterIcon(info.icon),
    launchActivity: launcher ? qualifyActivity(pkg, launcher) : undefined,
    supportedFormFactors: 'Universal',
    provisionsAllDevices: false,
    applicationErrors: launcher ? [] : ['The application has no launchable activity (MAIN/LAUNCHER); it cannot be launched.'],
  };
}

function text(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  // Strings from the binary manifest may carry UTF-16 NULs.
  const s = String(value).replace(/\u0000/g, '').trim();
  return s === '' ? undefined : s;
}

/** A label is a literal or the resource's values per configuration (first = default); unresolved refs are skipped. */
function resourceText(value: unknown): string | undefined {
  const candidates = Array.isArray(value) ? value : [value];
  for (const candidate of candidates) {
    const s = text(candidate);
    if (s && !/^@(0x)?[0-9a-f]{8}$/i.test(s)) return s;
  }
  return undefined;
}

function qualifyActivity(pkg: string, name: string): string {
  if (name.startsWith('.')) return pkg + name;
  return name.includes('.') ? name : `${pkg}.${name}`;
}

/** Keeps PNG and WebP rasters (labelled by their real type); drops anything else (e.g. adaptive-icon XML). */
function rasterIcon(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^data:[^;,]*;base64,(.*)$/s.exec(value);
  if (!match) return undefined;
  const head = Buffer.from(match[1].slice(0, 24), 'base64');
  if (head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) {
    return `data:image/png;base64,${match[1]}`;
  }
  if (head.subarray(0, 4).toString('latin1') === 'RIFF' && head.subarray(8, 12).toString('latin1') === 'WEBP') {
    return `data:image/webp;base64,${match[1]}`;
  }
  return undefined;
}
