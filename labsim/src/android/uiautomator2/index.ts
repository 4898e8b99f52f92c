/** The device side of Appium's UiAutomator2 driver: its server's instrumentation and the settings helper app. */
import type { ActivityManager } from '../activity';
import { APPIUM_SETTINGS } from '../app-code';
import type { PackageManager } from '../packages';
import { UIA2_INSTRUMENTATION, UIA2_SERVER_PACKAGE, type Uia2Host, uiautomator2Program } from './server';

export { UIA2_INSTRUMENTATION, UIA2_MJPEG_PORT, UIA2_PORT, UIA2_SERVER_PACKAGE, UiAutomator2Server, type Uia2Host } from './server';

/** Gives the device the code of io.appium.settings and of the UiAutomator2 server's instrumentation. */
export function installAppiumPrograms(am: ActivityManager, host: Omit<Uia2Host, 'serverVersion'> & { pm: PackageManager }): void {
  am.appPrograms.set('io.appium.settings', APPIUM_SETTINGS);
  am.instrumentationPrograms.set(UIA2_INSTRUMENTATION, uiautomator2Program({
    ...host,
    serverVersion: () => {
      const p = host.pm.get(UIA2_SERVER_PACKAGE);
      return { version: p?.versionName ?? '', versionCode: p?.versionCode ?? 0 };
    },
  }));
}
