/**
 * `pm list packages -f [--show-versioncode]`: `package:<path>=<pkg> versionCode:<n>`. The path contains `=`
 * (Android 11+ `~~...==`), so the package is what follows the LAST `=` before the optional suffixes.
 */
import { lines } from './text';

interface ListedPackage { packageId: string; path: string; versionCode?: string }

const LINE = /^package:(.+)=([A-Za-z0-9_.]+)(?: versionCode:(\d+))?(?: uid:(\d+))?$/;
const LINE_NO_PATH = /^package:([A-Za-z0-9_.]+)(?: versionCode:(\d+))?(?: uid:(\d+))?$/;

export function parsePackageList(text: string): ListedPackage[] {
  const out: ListedPackage[] = [];
  for (const raw of lines(text)) {
    const line = raw.trim();
    let m = LINE.exec(line);
    if (m) {
      out.push({ packageId: m[2], path: m[1], ...(m[3] ? { versionCode: m[3] } : {}) });
      continue;
    }
    m = LINE_NO_PATH.exec(line);
    if (m) out.push({ packageId: m[1], path: '', ...(m[2] ? { versionCode: m[2] } : {}) });
  }
  return out;
}
