/** The simulated Android screen and how a device wires it to its package manager, activity manager and battery. */
import type { ActivityManager } from '../activity';
import type { PackageManager } from '../packages';
import type { AndroidDeviceSpec } from '../spec';
import type { Battery } from '../system-services';
import { DeviceScreen } from './device-screen';

export { DeviceScreen } from './device-screen';
export type { ScreenHost, UiNode } from './device-screen';

/** The launcher each vendor ships (the package the home screen's hierarchy belongs to). */
const LAUNCHERS = ['com.google.android.apps.nexuslauncher', 'com.sec.android.app.launcher', 'com.motorola.launcher3'];

export function createDeviceScreen(spec: AndroidDeviceSpec, pm: PackageManager, am: ActivityManager, battery: Battery, hostPath: (devicePath: string) => string): DeviceScreen {
  const clock = new Intl.DateTimeFormat('en-GB', { timeZone: spec.timezone, hour: '2-digit', minute: '2-digit', hour12: false });
  const screen = new DeviceScreen({
    width: spec.screen.width,
    height: spec.screen.height,
    density: spec.screen.density,
    launcherPackage: LAUNCHERS.find((p) => pm.get(p)) ?? 'com.android.launcher3',
    installed: () => pm.list().map((p) => ({
      packageName: p.packageName,
      launchable: p.launcherActivity !== null,
      apkHostPath: p.system ? null : safeHostPath(hostPath, p.codePath),
      stamp: String(p.lastUpdateTimeMs),
    })),
    clock: () => clock.format(new Date()),
    battery: () => {
      const b = battery.get();
      return { level: b.level, charging: b.status === 2 };
    },
    startApp: (pkg) => am.startFromLauncher(pkg),
  });
  am.onForeground = (pkg) => screen.showApp(pkg);
  am.onStopped = (pkg) => screen.appStopped(pkg);
  return screen;
}

function safeHostPath(hostPath: (devicePath: string) => string, devicePath: string): string | null {
  try {
    return hostPath(devicePath);
  } catch {
    return null;
  }
}
