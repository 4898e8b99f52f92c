/**
 * `dumpsys package <pkg>`: versionName / versionCode of the FIRST package block (updated system apps appear
 * again under `Hidden system packages:`).
 */
import { lines } from './text';

interface PackageVersion { versionName?: string; versionCode?: string }

export function parseDumpsysPackageVersion(text: string): PackageVersion {
  const out: PackageVersion = {};
  for (const line of lines(text)) {
    if (/^Hidden system packages:/.test(line.trim())) break;
    if (out.versionName === undefined) {
      const m = /^\s*versionName=(.*)$/.exec(line);
      if (m) out.versionName = m[1].trim();
    }
    if (out.versionCode === undefined) {
      const m = /^\s*versionCode=(\d+)/.exec(line);
      if (m) out.versionCode = m[1];
    }
  }
  return out;
}
