/**
 * Reads what installd needs from an uploaded IPA: the top-level `Payload/<Name>.app/Info.plist` (binary or XML).
 * App extensions (`.app/PlugIns/*.appex/Info.plist`) are not the app and are ignored.
 */
import { ZipReader } from '../apk/zip';
import { PlistDict, decodePlistDict } from '@devicelab/shared';

export interface IpaInfo {
  bundleId: string;
  /** The app's folder name, e.g. `Demo.app`. */
  appFolder: string;
  infoPlist: PlistDict;
}

/** Why an upload is not an installable package: installd's error name and description. */
export class IpaError extends Error {
  constructor(readonly errorName: string, message: string) {
    super(message);
  }
}

export function readIpa(bytes: Buffer): IpaInfo {
  let zip: ZipReader;
  try {
    zip = new ZipReader(bytes);
  } catch (e) {
    throw new IpaError('PackageExtractionFailed', `Failed to extract package: ${(e as Error).message}`);
  }
  const entry = zip.entries.find((e) => /^Payload\/[^/]+\.app\/Info\.plist$/.test(e.name));
  if (!entry) throw new IpaError('PackageInspectionFailed', 'Failed to find an app bundle (Payload/*.app/Info.plist) in the package');
  let infoPlist: PlistDict;
  try {
    infoPlist = decodePlistDict(zip.read(entry));
  } catch (e) {
    throw new IpaError('PackageInspectionFailed', `Failed to read Info.plist: ${(e as Error).message}`);
  }
  const bundleId = infoPlist.CFBundleIdentifier;
  if (typeof bundleId !== 'string' || !bundleId) throw new IpaError('PackageInspectionFailed', 'Info.plist has no CFBundleIdentifier');
  return { bundleId, appFolder: entry.name.split('/')[1], infoPlist };
}
