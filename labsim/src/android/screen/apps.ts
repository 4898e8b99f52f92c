/**
 * The launcher's view of installed apps: a label and, when the APK carries one under a conventional name, its
 * icon. labsim reads no resource table, so the icon is the highest-density `ic_launcher.png`
 * or `icon.png` of the APK; an app without one gets a coloured tile with its initials.
 */
import * as fs from 'node:fs';
import { PNG } from 'pngjs';
import { ZipReader } from '../../apk/zip';
import type { LaunchableApp } from './layout';

/** Labels of the preinstalled apps, as their launchers show them. */
const KNOWN_LABELS: Record<string, string> = {
  'com.android.settings': 'Settings', 'com.android.vending': 'Play Store', 'com.android.chrome': 'Chrome',
  'com.google.android.apps.messaging': 'Messages', 'com.google.android.dialer': 'Phone', 'com.google.android.youtube': 'YouTube',
  'com.sec.android.app.camera': 'Camera', 'org.mozilla.firefox': 'Firefox', 'com.spotify.music': 'Spotify',
  'io.appium.android.apis': 'API Demos', 'com.example.android.contactmanager': 'Contact Manager', 'io.appium.settings': 'Appium Settings',
};

/** Icons larger than this are not decoded (a hostile APK must not cost the simulator much). */
const MAX_ICON_SIDE = 512;
const MAX_ICON_BYTES = 1024 * 1024;

/** A label for a package without a known one: its last name part, capitalised ("com.acme.notes" -> "Notes"). */
export function labelOf(packageName: string): string {
  const known = KNOWN_LABELS[packageName];
  if (known) return known;
  const last = packageName.split('.').filter(Boolean).pop() ?? packageName;
  return last.charAt(0).toUpperCase() + last.slice(1);
}

const DENSITY_RANK = ['ldpi', 'mdpi', 'tvdpi', 'hdpi', 'xhdpi', 'xxhdpi', 'xxxhdpi'];

/** The decoded launcher icon of an APK file on the host, or null when it has none labsim can find. */
export function iconOf(apkHostPath: string): LaunchableApp['icon'] {
  try {
    const zip = new ZipReader(fs.readFileSync(apkHostPath));
    const candidates = zip.entries
      .filter((e) => /^res\/(drawable|mipmap)[^/]*\/(ic_launcher|icon)\.png$/.test(e.name) && e.size <= MAX_ICON_BYTES)
      .map((e) => ({ e, rank: DENSITY_RANK.findIndex((d) => e.name.split('/')[1].split('-').includes(d)) }))
      .sort((a, b) => b.rank - a.rank);
    for (const { e } of candidates) {
      const data = zip.read(e);
      if (data.length < 24 || data.readUInt32BE(16) > MAX_ICON_SIDE || data.readUInt32BE(20) > MAX_ICON_SIDE) continue;
      const png = PNG.sync.read(data);
      return { width: png.width, height: png.height, data: png.data };
    }
  } catch {
    // An unreadable APK or icon: the tile stands in.
  }
  return null;
}

/** Remembers decoded icons per APK file and modification, so the launcher does not decode them on each frame. */
export class IconCache {
  private readonly icons = new Map<string, { stamp: string; icon: LaunchableApp['icon'] }>();

  get(apkHostPath: string | null, stamp: string): LaunchableApp['icon'] {
    if (!apkHostPath) return null;
    const known = this.icons.get(apkHostPath);
    if (known?.stamp === stamp) return known.icon;
    const icon = iconOf(apkHostPath);
    this.icons.set(apkHostPath, { stamp, icon });
    return icon;
  }
}
