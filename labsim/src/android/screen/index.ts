/**
 * The device's screen as apps and UI automation see it: a home screen with a launcher icon per launchable app,
 * the foreground app's window after a launch, touches and keys, and pictures of it. Minimal: the window content is
 * one title per app.
 */
import { EventEmitter } from 'node:events';
import type { PackageManager } from '../packages';
import type { AndroidDeviceSpec } from '../spec';
import { screenshotPng } from '../system-services';

export interface UiNode {
  className: string;
  text: string;
  resourceId: string;
  contentDesc: string;
  packageName: string;
  bounds: [number, number, number, number];
  clickable: boolean;
  focused: boolean;
  children: UiNode[];
}

const LABELS: Record<string, string> = {
  'com.android.chrome': 'Chrome', 'org.mozilla.firefox': 'Firefox', 'com.android.settings': 'Settings', 'com.android.vending': 'Play Store',
  'com.google.android.apps.messaging': 'Messages', 'com.google.android.dialer': 'Phone', 'com.google.android.youtube': 'YouTube',
  'com.spotify.music': 'Spotify', 'com.sec.android.app.camera': 'Camera',
};

export function appLabel(pkg: string): string {
  const last = pkg.split('.').pop() ?? pkg;
  return LABELS[pkg] ?? last.charAt(0).toUpperCase() + last.slice(1);
}

const node = (className: string, packageName: string, bounds: UiNode['bounds'], extra: Partial<UiNode> = {}): UiNode => ({
  className, text: '', resourceId: '', contentDesc: '', packageName, bounds, clickable: false, focused: false, children: [], ...extra,
});

export class DeviceScreen extends EventEmitter {
  rotation = 0;
  frameNumber = 0;
  private foreground: string | null = null;
  private typed = '';

  constructor(private readonly spec: AndroidDeviceSpec, private readonly pm: PackageManager) {
    super();
  }

  get width(): number {
    return this.spec.screen.width;
  }

  get height(): number {
    return this.spec.screen.height;
  }

  foregroundPackage(): string | null {
    return this.foreground;
  }

  private launcherPackage(): string {
    return this.pm.list().find((p) => /launcher/.test(p.packageName))?.packageName ?? 'com.android.launcher3';
  }

  hierarchy(): UiNode {
    const { width: w, height: h } = this;
    const bar = Math.round(h * 0.03);
    const status = node('android.widget.FrameLayout', 'com.android.systemui', [0, 0, w, bar], { resourceId: 'com.android.systemui:id/status_bar' });
    const fg = this.foregroundPackage();
    if (fg) {
      const title = node('android.widget.TextView', fg, [0, bar, w, bar + 160], { text: appLabel(fg), resourceId: `${fg}:id/title` });
      const field = node('android.widget.EditText', fg, [40, bar + 200, w - 40, bar + 320], { text: this.typed, resourceId: `${fg}:id/input`, clickable: true });
      return node('android.widget.FrameLayout', fg, [0, 0, w, h], { children: [node('android.widget.LinearLayout', fg, [0, bar, w, h], { children: [title, field] }), status] });
    }
    const launcher = this.launcherPackage();
    const apps = this.pm.list().filter((p) => p.launcherActivity).sort((a, b) => appLabel(a.packageName).localeCompare(appLabel(b.packageName)));
    const cell = Math.floor(w / 4);
    const icons = apps.map((p, i) => {
      const x = (i % 4) * cell;
      const y = bar + 100 + Math.floor(i / 4) * cell;
      return node('android.widget.TextView', launcher, [x, y, x + cell, y + cell], { text: appLabel(p.packageName), contentDesc: appLabel(p.packageName), clickable: true });
    });
    const grid = node('android.view.ViewGroup', launcher, [0, bar, w, h], { resourceId: `${launcher}:id/workspace`, children: icons });
    return node('android.widget.FrameLayout', launcher, [0, 0, w, h], { children: [grid, status] });
  }

  tap(x: number, y: number): void {
    this.frameNumber++;
    if (this.foregroundPackage()) return;
    const icon = this.hierarchy().children[0].children.find((n) => x >= n.bounds[0] && x < n.bounds[2] && y >= n.bounds[1] && y < n.bounds[3]);
    const pkg = icon && this.pm.list().find((p) => p.launcherActivity && appLabel(p.packageName) === icon.text);
    if (pkg) this.launch(pkg.packageName);
  }

  touch(_contact: number, action: 'down' | 'move' | 'up', x: number, y: number): void {
    if (action === 'up') this.tap(x, y);
  }

  pressKey(keycode: number): void {
    this.frameNumber++;
    if (keycode === 3 || keycode === 4) this.foreground = null;
  }

  typeText(text: string): void {
    this.typed += text;
    this.frameNumber++;
  }

  launch(pkg: string): void {
    this.foreground = pkg;
    this.frameNumber++;
    this.emit('frame');
  }

  png(): Buffer {
    return screenshotPng(this.width, this.height);
  }
}
