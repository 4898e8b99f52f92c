/**
 * Metadata of an APK: the binary manifest (package, versionName/versionCode, minSdk, launcher activity) and the
 * resource table (label, icon path) are decoded with app-info-parser's AXML and resources.arsc parsers; the entries
 * are read with our own zip reader (already verified whole), never with app-info-parser's unzip, whose errors
 * escape as uncaught exceptions. This runs inside the package worker, which bounds what a hostile file can cost.
 */
import { ApiFailure } from '@devicelab/shared';
import { AndroidChunkError, checkBinaryXml, checkResourceTable } from './android-chunks';
import { isWebp, storedIcon, type StoredIcon } from './app-icon';
import type { AppMetadata } from './app-metadata';
import { isPng } from './png-cgbi';
import type { ZipEntry, ZipReader } from './zip-reader';

// app-info-parser ships no types; this is the part of its surface used here.
const ManifestParser = require('app-info-parser/src/xml-parser/manifest') as new (buffer: Buffer, options: object) => {
  parse(): Record<string, unknown>;
};
const ResourceFinder = require('app-info-parser/src/resource-finder') as new () => {
  processResourceTable(buffer: Buffer): Record<string, unknown>;
};
const { mapInfoResource, findApkIconPath } = require('app-info-parser/src/utils') as {
  mapInfoResource(info: Record<string, unknown>, resources: Record<string, unknown>): Record<string, unknown>;
  findApkIconPath(info: Record<string, unknown>): string;
};

const MAX_MANIFEST_BYTES = 8 * 1024 * 1024;
const MAX_RESOURCES_BYTES = 256 * 1024 * 1024;
const MAX_ICON_BYTES = 8 * 1024 * 1024;
// What app-info-parser's own parse skips: components other than the launcher are not needed.
const MANIFEST_IGNORE = ['application.activity', 'application.service', 'application.receiver', 'application.provider',
  'permission-group'];

const invalid = (): ApiFailure => new ApiFailure('The file is not a valid Android application package.');

/** The manifest's entry, looked for by name (before anything is inflated); none: the archive is no APK. */
export function apkManifestEntry(zip: ZipReader): ZipEntry {
  const entry = findNamed(zip, 'androidmanifest.xml');
  if (!entry) throw new ApiFailure('The upload is not a valid APK: it has no AndroidManifest.xml.');
  return entry;
}

export async function readApkArchive(zip: ZipReader): Promise<AppMetadata> {
  const manifestEntry = apkManifestEntry(zip);
  let info: Record<string, unknown>;
  try {
    const manifest = await zip.read(manifestEntry, MAX_MANIFEST_BYTES);
    checkBinaryXml(manifest);
    info = new ManifestParser(manifest, { ignore: MANIFEST_IGNORE }).parse();
  } catch (err) {
    throw new ApiFailure(`The upload is not a valid APK: its AndroidManifest.xml cannot be read${reason(err)}.`);
  }
  const resourcesEntry = findNamed(zip, 'resources.arsc');
  let icon: StoredIcon | undefined;
  if (resourcesEntry) {
    try {
      const table = await zip.read(resourcesEntry, MAX_RESOURCES_BYTES);
      checkResourceTable(table);
      info = mapInfoResource(info, new ResourceFinder().processResourceTable(table));
    } catch (err) {
      throw new ApiFailure(`The upload is not a valid APK: its resources.arsc cannot be read${reason(err)}.`);
    }
    icon = await readIcon(zip, info);
  }
  const metadata = fromManifest(info, icon ?? {});
  if (!metadata) throw invalid();
  return metadata;
}

/** Our structure checks say what is wrong; app-info-parser's own errors are not worth repeating. */
function reason(err: unknown): string {
  return err instanceof AndroidChunkError ? ` (${err.message})` : '';
}

/** Case-insensitive, as app-info-parser matched them. */
function findNamed(zip: ZipReader, lowerCaseName: string): ZipEntry | undefined {
  return zip.entries.find((e) => e.name.toLowerCase() === lowerCaseName);
}

/**
 * The icon entry is the first whose name contains the resolved path (app-info-parser's rule). Unreadable, or not
 * a raster (an adaptive-icon XML): none.
 */
async function readIcon(zip: ZipReader, info: Record<string, unknown>): Promise<StoredIcon | undefined> {
  if (typeof info.application !== 'object' || info.application === null) return undefined;
  // Resource strings may carry UTF-16 NULs, which app-info-parser's unzip stripped from the path it looked for.
  const iconPath = text(findApkIconPath(info));
  if (!iconPath) return undefined;
  const entry = zip.entries.find((e) => e.name.toLowerCase().includes(iconPath.toLowerCase()));
  if (!entry) return undefined;
  try {
    const bytes = await zip.read(entry, MAX_ICON_BYTES);
    return isPng(bytes) || isWebp(bytes) ? storedIcon(bytes) : undefined;
  } catch {
    return undefined;
  }
}

function fromManifest(info: Record<string, unknown>, icon: StoredIcon): AppMetadata | undefined {
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
    iconDataUrl: icon.dataUrl,
    launchActivity: launcher ? qualifyActivity(pkg, launcher) : undefined,
    supportedFormFactors: 'Universal',
    provisionsAllDevices: false,
    applicationErrors: [
      ...launcher ? [] : ['The application has no launchable activity (MAIN/LAUNCHER); it cannot be launched.'],
      ...icon.warning ? [icon.warning] : [],
    ],
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
