/**
 * APK facts the simulated package manager needs: package name, versions,
 * SDK levels, declared activities, the launcher activity and instrumentations.
 */
import { ZipError, ZipReader } from './zip';
import { AxmlAttribute, AxmlError, AxmlEvent, parseAxml } from './axml';

const ATTR_NAME = 0x01010003;
const ATTR_VERSION_CODE = 0x0101021b;
const ATTR_VERSION_NAME = 0x0101021c;
const ATTR_MIN_SDK = 0x0101020c;
const ATTR_TARGET_SDK = 0x01010270;
const ATTR_LABEL = 0x01010001;
const ATTR_TARGET_PACKAGE = 0x01010021;

export interface ApkInfo {
  packageName: string;
  /** 0 when the manifest has no versionCode (Android's default). */
  versionCode: number;
  versionName: string | null;
  minSdk: number;
  targetSdk: number | null;
  /** Fully qualified class names of activities and activity-aliases. */
  activities: string[];
  /** Fully qualified class name of the MAIN/LAUNCHER activity, if any. */
  launcherActivity: string | null;
  /** `<instrumentation>` elements (what `pm list instrumentation` lists and `am instrument` runs). */
  instrumentations: ApkInstrumentation[];
  /** `<uses-permission>` names, in manifest order. */
  permissions: string[];
}

export interface ApkInstrumentation {
  /** Fully qualified class name. */
  name: string;
  /** Null when the manifest names none (Java prints it as "null"). */
  targetPackage: string | null;
  /** A literal label; null when absent or a resource reference. */
  label: string | null;
}

/** The APK cannot be parsed; maps to INSTALL_PARSE_FAILED_NOT_APK. */
export class ApkParseError extends Error {}

export function parseApk(data: Buffer): ApkInfo {
  let manifest: Buffer;
  try {
    const zip = new ZipReader(data);
    const entry = zip.find('AndroidManifest.xml');
    if (!entry) throw new ApkParseError('Failed to parse AndroidManifest.xml: file not found in archive');
    manifest = zip.read(entry);
  } catch (e) {
    if (e instanceof ApkParseError) throw e;
    throw new ApkParseError(e instanceof ZipError ? `Failed to open archive: ${e.message}` : String(e));
  }
  try {
    return readManifest(parseAxml(manifest));
  } catch (e) {
    if (e instanceof ApkParseError) throw e;
    throw new ApkParseError(e instanceof AxmlError ? `Failed to parse AndroidManifest.xml: ${e.message}` : String(e));
  }
}

function attr(attrs: AxmlAttribute[], resourceId: number, fallbackName: string): AxmlAttribute['value'] | undefined {
  return (attrs.find((a) => a.resourceId === resourceId) ?? attrs.find((a) => a.name === fallbackName && a.resourceId === undefined))
    ?.value;
}

export function qualifyClassName(packageName: string, name: string): string {
  if (name.startsWith('.')) return packageName + name;
  return name.includes('.') ? name : `${packageName}.${name}`;
}

function readManifest(events: AxmlEvent[]): ApkInfo {
  const root = events.find((e) => e.kind === 'start');
  if (!root || root.name !== 'manifest') throw new ApkParseError('Failed to parse AndroidManifest.xml: no <manifest> root');
  const pkg = root.attributes.find((a) => a.name === 'package')?.value;
  if (typeof pkg !== 'string' || !pkg) throw new ApkParseError('<manifest> has no package attribute');
  const versionCode = attr(root.attributes, ATTR_VERSION_CODE, 'versionCode');
  const versionName = attr(root.attributes, ATTR_VERSION_NAME, 'versionName');
  const info: ApkInfo = {
    packageName: pkg,
    versionCode: typeof versionCode === 'number' ? versionCode : Number(versionCode ?? 0) || 0,
    versionName: versionName === undefined ? null : String(versionName),
    minSdk: 1,
    targetSdk: null,
    activities: [],
    launcherActivity: null,
    instrumentations: [],
    permissions: [],
  };

  // Walk the element tree keeping the enclosing activity and intent-filter state.
  const stack: string[] = [];
  let activity: string | null = null;
  let filter: { main: boolean; launcher: boolean } | null = null;
  for (const ev of events) {
    if (ev.kind === 'end') {
      stack.pop();
      if (ev.name === 'intent-filter' && filter && activity) {
        if (filter.main && filter.launcher && !info.launcherActivity) info.launcherActivity = activity;
        filter = null;
      } else if (ev.name === 'activity' || ev.name === 'activity-alias') activity = null;
      continue;
    }
    stack.push(ev.name);
    const name = attr(ev.attributes, ATTR_NAME, 'name');
    if (ev.name === 'uses-sdk') {
      const min = attr(ev.attributes, ATTR_MIN_SDK, 'minSdkVersion');
      const target = attr(ev.attributes, ATTR_TARGET_SDK, 'targetSdkVersion');
      if (typeof min === 'number') info.minSdk = min;
      if (typeof target === 'number') info.targetSdk = target;
    } else if ((ev.name === 'activity' || ev.name === 'activity-alias') && typeof name === 'string') {
      activity = qualifyClassName(pkg, name);
      info.activities.push(activity);
    } else if (ev.name === 'instrumentation' && typeof name === 'string') {
      const target = attr(ev.attributes, ATTR_TARGET_PACKAGE, 'targetPackage');
      const label = attr(ev.attributes, ATTR_LABEL, 'label');
      info.instrumentations.push({
        name: qualifyClassName(pkg, name),
        targetPackage: typeof target === 'string' && target ? target : null,
        label: typeof label === 'string' && !label.startsWith('@') ? label : null,
      });
    } else if (ev.name === 'uses-permission' && typeof name === 'string' && stack.length === 2) {
      info.permissions.push(name);
    } else if (ev.name === 'intent-filter' && activity) {
      filter = { main: false, launcher: false };
    } else if (filter && ev.name === 'action' && name === 'android.intent.action.MAIN') {
      filter.main = true;
    } else if (filter && ev.name === 'category' && name === 'android.intent.category.LAUNCHER') {
      filter.launcher = true;
    }
  }
  return info;
}
