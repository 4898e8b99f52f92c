/**
 * `dumpsys package <pkg>`: versionName / versionCode of the FIRST package block (updated system apps appear
 * again under `Hidden system packages:`).
 */
import { lines } from './text';

interface PackageVersion { versionName?: string; versionCode?: string }

export function parseDumpsysPackageVersion(text: string): PackageVersion {
  const out: PackageVersion = {};
  let nameSeen = false;
  for (const line of lines(text)) {
    if (/^Hidden system packages:/.test(line.trim())) break;
    const name = nameSeen ? null : /^\s*versionName=(.*)$/.exec(line);
    if (name) {
      nameSeen = true;
      // An app without android:versionName is dumped as `versionName=null` (Java's string of a null).
      if (name[1].trim() !== 'null') out.versionName = name[1].trim();
    }
    if (out.versionCode === undefined) {
      const m = /^\s*versionCode=(\d+)/.exec(line);
      if (m) out.versionCode = m[1];
    }
  }
  return out;
}
