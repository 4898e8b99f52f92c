/**
 * Installed packages: `pm list packages -f --show-versioncode` (all) and `-3` (third-party; system = not in
 * that list), versionName from `dumpsys package` for third-party packages only (one batched call).
 */
import type { DeviceClient } from '@devicefarmer/adbkit';
import type { InstalledPackage } from '@devicelab/proto';
import { parseDumpsysPackageVersion } from './parsers/dumpsys-package';
import { parsePackageList } from './parsers/packages';
import { batchScript } from './parsers/text';
import { shellQuote } from '@devicelab/shared';
import { runBatch } from './shell';

export const PACKAGE_LIST_SCRIPT = batchScript({
  all: 'pm list packages -f --show-versioncode 2>/dev/null',
  third: 'pm list packages -f -3 --show-versioncode 2>/dev/null',
  end: 'true',
});

/** One marker per package: `@@pkg:<id>`. Only lines with versionName/versionCode are kept on the device. */
export function versionScript(packageIds: string[]): string {
  return packageIds
    .map((id) => `echo @@pkg:${id}; dumpsys package ${shellQuote(id)} 2>/dev/null | grep -E 'versionName=|versionCode=|^Hidden system packages:'`)
    .concat('echo @@end')
    .join('; ');
}

/** The packages from the sections of PACKAGE_LIST_SCRIPT's and versionScript's outputs. */
export function packagesFromOutput(lists: Map<string, string>, versions: Map<string, string>): InstalledPackage[] {
  const all = parsePackageList(lists.get('all') ?? '');
  const third = new Set(parsePackageList(lists.get('third') ?? '').map((p) => p.packageId));
  const seen = new Set<string>();
  const out: InstalledPackage[] = [];
  for (const p of all) {
    if (seen.has(p.packageId)) continue;
    seen.add(p.packageId);
    const dumped = parseDumpsysPackageVersion(versions.get(`pkg:${p.packageId}`) ?? '');
    out.push({
      identifier: p.packageId,
      version: dumped.versionName ?? '',
      buildVersion: p.versionCode ?? dumped.versionCode ?? '',
      system: !third.has(p.packageId),
    });
  }
  return out;
}

export async function readInstalledPackages(device: DeviceClient, timeoutMs?: number): Promise<InstalledPackage[]> {
  const lists = await runBatch(device, PACKAGE_LIST_SCRIPT, 'packages', timeoutMs);
  const third = parsePackageList(lists.get('third') ?? '').map((p) => p.packageId);
  const versions = third.length > 0 ? await runBatch(device, versionScript(third), 'package versions', timeoutMs) : new Map<string, string>();
  return packagesFromOutput(lists, versions);
}
