/** The device tools that read the screen: `screencap`, `dumpsys window` and `dumpsys power`. */
import type { ToolIO } from '../tool-io';
import type { DeviceScreen } from './device-screen';

/** The activity each vendor's launcher shows its home screen with. */
const LAUNCHER_ACTIVITIES: Record<string, string> = {
  'com.google.android.apps.nexuslauncher': 'com.google.android.apps.nexuslauncher.NexusLauncherActivity',
  'com.sec.android.app.launcher': 'com.sec.android.app.launcher.activities.LauncherActivity',
};

/**
 * `screencap [-hp] [-d display-id] [FILENAME]`: PNG with -p or a FILENAME ending in .png, else the raw form (width,
 * height, format 1 = RGBA_8888, and since Android 9 the dataspace, each a 32-bit little-endian word, then pixels).
 */
export function screencap(screen: DeviceScreen, sdk: number, args: string[], io: ToolIO, writeFile: (path: string, data: Buffer) => void): number {
  let png = false;
  let file: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '-p') png = true;
    else if (a === '-d') i++;
    else if (a.startsWith('-')) {
      io.err('usage: screencap [-hp] [-d display-id] [FILENAME]\n   -h: this message\n   -p: save the file as a png.\n   -d: specify the physical display ID to capture (default: 0)\n      see "dumpsys SurfaceFlinger --display-id" for valid display IDs.\nIf FILENAME ends with .png it will be saved as a png.\nIf FILENAME is not given, the results will be printed to stdout.\n');
      return a === '-h' ? 0 : 1;
    } else file = a;
  }
  if (file?.endsWith('.png')) png = true;
  let data: Buffer;
  if (png) data = screen.png();
  else {
    const header = Buffer.alloc(sdk >= 28 ? 16 : 12);
    header.writeUInt32LE(screen.displayWidth, 0);
    header.writeUInt32LE(screen.displayHeight, 4);
    header.writeUInt32LE(1, 8);
    if (sdk >= 28) header.writeUInt32LE(1, 12);
    data = Buffer.concat([header, screen.rgba()]);
  }
  if (file) writeFile(file, data);
  else io.out(data);
  return 0;
}

export interface FocusInfo {
  screen: DeviceScreen;
  launcherPackage: string;
  /** The activity an app shows in front (its launcher activity). */
  activityOf(pkg: string): string | null;
}

/** The component in front: the foreground app's activity, or the launcher's. */
function focused(f: FocusInfo): string {
  const pkg = f.screen.foregroundPackage();
  if (pkg) return `${pkg}/${f.activityOf(pkg) ?? `${pkg}.MainActivity`}`;
  return `${f.launcherPackage}/${LAUNCHER_ACTIVITIES[f.launcherPackage] ?? 'com.android.launcher3.Launcher'}`;
}

/** The lines of `dumpsys window` (windows / displays) that say which window has focus and whether the screen is on. */
export function windowFocusLines(f: FocusInfo): string {
  const component = focused(f);
  const on = f.screen.isOn;
  return [
    `  mCurrentFocus=Window{4f5b1a2 u0 ${component}}`,
    `  mFocusedApp=ActivityRecord{c5b9a1e u0 ${component} t12}`,
    `    mHoldScreenWindow=null`,
    `  mScreenOnFully=${on}`,
    `  screenState=${on ? 'SCREEN_STATE_ON' : 'SCREEN_STATE_OFF'}`,
    `  KeyguardStateMonitor`,
    `    mIsShowing=false`,
    `    mInputRestricted=false`,
  ].join('\n') + '\n';
}

/** `dumpsys power`: the wakefulness follows the screen. */
export function dumpsysPower(screen: DeviceScreen): string {
  const awake = screen.isOn;
  return [
    'POWER MANAGER (dumpsys power)',
    '',
    'Power Manager State:',
    `  mWakefulness=${awake ? 'Awake' : 'Asleep'}`,
    `  mWakefulnessChanging=false`,
    `  mIsPowered=true`,
    `  mHoldingDisplaySuspendBlocker=${awake}`,
    `  Display Power: state=${awake ? 'ON' : 'OFF'}`,
  ].join('\n') + '\n';
}
