/** What a simulated Android screen reads from its device, and the launcher's list of apps built from it. */
import { EventEmitter } from 'node:events';
import { IconCache, labelOf } from './apps';
import type { LaunchableApp } from './layout';

export interface ScreenHost {
  width: number;
  height: number;
  density: number;
  /** The launcher's package (the hierarchy's package while no app is in front). */
  launcherPackage: string;
  /** Installed apps: whether the launcher lists them, and their APK on the host (for the icon). */
  installed(): Array<{ packageName: string; launchable: boolean; apkHostPath: string | null; stamp: string }>;
  /** The status bar's clock, "HH:MM" in the device's time zone. */
  clock(): string;
  battery(): { level: number; charging: boolean };
  /** Starts the app's process (the activity manager's side of a launch). */
  startApp?(packageName: string): void;
}

/** What changes the picture without any input: the clock's minute, the battery, the installed apps. */
export function ambientKey(host: ScreenHost): string {
  const battery = host.battery();
  const apps = host.installed().filter((p) => p.launchable).map((p) => `${p.packageName}@${p.stamp}`).join(',');
  return `${host.clock()}|${battery.level}|${battery.charging}|${apps}`;
}

/** Installed apps with their labels and icons (icons decoded once per APK version). */
export class AppCatalogue {
  private readonly icons = new IconCache();

  constructor(private readonly host: ScreenHost) {}

  isInstalled(pkg: string): boolean {
    return this.host.installed().some((p) => p.packageName === pkg);
  }

  app(pkg: string): LaunchableApp {
    const info = this.host.installed().find((p) => p.packageName === pkg);
    return { packageName: pkg, label: labelOf(pkg), icon: info ? this.icons.get(info.apkHostPath, info.stamp) : null };
  }

  /** What the launcher lists, by label. */
  launchable(): LaunchableApp[] {
    return this.host.installed().filter((p) => p.launchable)
      .map((p) => ({ packageName: p.packageName, label: labelOf(p.packageName), icon: this.icons.get(p.apkHostPath, p.stamp) }))
      .sort((a, b) => a.label.localeCompare(b.label, 'en'));
  }
}

/** Calls `poll` every intervalMs while `emitter` has listeners for `event` (the timer never keeps the process up). */
export function pollWhileWatched(emitter: EventEmitter, event: string, intervalMs: number, poll: () => void): void {
  let timer: NodeJS.Timeout | undefined;
  emitter.on('newListener', (name) => {
    if (name !== event || timer) return;
    timer = setInterval(poll, intervalMs);
    timer.unref();
  });
  emitter.on('removeListener', () => {
    if (emitter.listenerCount(event) > 0 || !timer) return;
    clearInterval(timer);
    timer = undefined;
  });
}
