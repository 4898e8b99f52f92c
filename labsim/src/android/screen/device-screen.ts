/**
 * The screen of one simulated Android device: UI state (launcher, recents, the foreground app's screen, status
 * bar, touch feedback, power), its view hierarchy and its pixels. Every reader (screencap, minicap, the
 * UiAutomator2 server) reads this one model, so they all see the same picture; input changes it.
 */
import { EventEmitter } from 'node:events';
import { PNG } from 'pngjs';
import { Canvas } from './canvas';
import { encodeJpeg } from './jpeg-encoder';
import { IconCache, labelOf } from './apps';
import { AppUiState, ScreenView, UiNode, buildHierarchy, hitTest } from './hierarchy';
import { KEYCODE, typedChar } from './keys';
import { LaunchableApp, Metrics, inside, navBar } from './layout';
import { TouchMark, renderScreen } from './render';

export type { UiNode } from './hierarchy';

/** What the screen reads from its device. */
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

/** How long a lifted touch and the volume panel stay visible. */
const TOUCH_MARK_MS = 400;
const VOLUME_PANEL_MS = 1500;

interface Contact {
  downX: number;
  downY: number;
  x: number;
  y: number;
  moved: boolean;
}

export class DeviceScreen extends EventEmitter {
  readonly width: number;
  readonly height: number;
  private rotationValue: 0 | 1 | 2 | 3 = 0;
  private frame = 0;
  private readonly metrics: Metrics;
  private readonly canvas: Canvas;
  private rendered = -1;
  private pngCache: { frame: number; data: Buffer } | undefined;
  private jpegCache: { key: string; data: Buffer } | undefined;
  private view: { kind: 'launcher' | 'recents' } | { kind: 'app'; packageName: string } = { kind: 'launcher' };
  private readonly appStates = new Map<string, AppUiState>();
  /** Apps in the order last used, newest first. */
  private recentPackages: string[] = [];
  private screenOn = true;
  private volume = 8;
  private volumeShownUntil = 0;
  private readonly contacts = new Map<number, Contact>();
  private lifted: Array<{ x: number; y: number; until: number }> = [];
  private ambientKey = '';
  private ambientTimer: NodeJS.Timeout | undefined;
  private fadeTimer: NodeJS.Timeout | undefined;
  private readonly icons = new IconCache();
  /** What PASTE inserts. */
  clipboard = '';

  constructor(private readonly host: ScreenHost) {
    super();
    // Every stream reading the screen (minicap, the UiAutomator2 server's MJPEG) listens for changes.
    this.setMaxListeners(100);
    this.width = host.width;
    this.height = host.height;
    this.metrics = { width: host.width, height: host.height, dp: host.density / 160 };
    this.canvas = new Canvas(host.width, host.height);
    this.ambientKey = this.computeAmbientKey();
    // The clock, the battery and the installed apps change on their own: looked at while someone watches.
    this.on('newListener', (event) => {
      if (event === 'change' && !this.ambientTimer) {
        this.ambientTimer = setInterval(() => this.refreshAmbient(), 1000);
        this.ambientTimer.unref();
      }
    });
    this.on('removeListener', () => {
      if (this.listenerCount('change') === 0 && this.ambientTimer) {
        clearInterval(this.ambientTimer);
        this.ambientTimer = undefined;
      }
    });
  }

  get frameNumber(): number {
    return this.frame;
  }

  /** Orientation in quarter turns, as minicap reports it; the picture itself is always drawn upright. */
  get rotation(): 0 | 1 | 2 | 3 {
    return this.rotationValue;
  }

  set rotation(value: 0 | 1 | 2 | 3) {
    if (value === this.rotationValue) return;
    this.rotationValue = value;
    this.changed();
  }

  /** The package of the home screen (the hierarchy's package while no app is in front). */
  get launcherPackage(): string {
    return this.host.launcherPackage;
  }

  get isOn(): boolean {
    return this.screenOn;
  }

  foregroundPackage(): string | null {
    return this.view.kind === 'app' ? this.view.packageName : null;
  }

  hierarchy(): UiNode {
    this.refreshAmbient();
    return buildHierarchy({ metrics: this.metrics, view: this.screenView(), launcherPackage: this.host.launcherPackage, apps: this.launcherApps(), recents: this.recentApps() });
  }

  tap(x: number, y: number): void {
    if (!this.screenOn) return;
    this.markLifted(x, y);
    const nav = navBar(this.metrics);
    if (inside(nav.bar, x, y)) {
      if (inside(nav.back, x, y)) this.pressKey(KEYCODE.BACK);
      else if (inside(nav.home, x, y)) this.pressKey(KEYCODE.HOME);
      else if (inside(nav.recents, x, y)) this.pressKey(KEYCODE.APP_SWITCH);
      return;
    }
    const target = hitTest(this.hierarchy(), x, y);
    if (!target) return;
    const pkg = this.foregroundPackage();
    if (pkg === null) {
      const app = [...this.launcherApps(), ...this.recentApps()].find((a) => a.label === target.text);
      if (app) this.launch(app.packageName);
      return;
    }
    const ui = this.appState(pkg);
    if (target.resourceId.endsWith(':id/input')) ui.focused = true;
    else if (target.resourceId.endsWith(':id/button')) {
      const count = Number(/^Tapped (\d+) times?$/.exec(ui.status)?.[1] ?? 0) + 1;
      ui.status = `Tapped ${count} time${count === 1 ? '' : 's'}`;
    }
    this.changed();
  }

  touch(contact: number, phase: 'down' | 'move' | 'up', x: number, y: number): void {
    if (!this.screenOn) return;
    const known = this.contacts.get(contact);
    if (phase === 'down') {
      this.contacts.set(contact, { downX: x, downY: y, x, y, moved: false });
    } else if (phase === 'move' && known) {
      known.x = x;
      known.y = y;
      if (Math.hypot(x - known.downX, y - known.downY) > 12 * this.metrics.dp) known.moved = true;
    } else if (phase === 'up' && known) {
      this.contacts.delete(contact);
      if (!known.moved) {
        this.tap(known.downX, known.downY);
        return;
      }
      this.markLifted(known.x, known.y);
    } else return;
    this.changed();
  }

  pressKey(keycode: number): void {
    if (keycode === KEYCODE.POWER || keycode === KEYCODE.SLEEP || keycode === KEYCODE.WAKEUP) {
      const next = keycode === KEYCODE.POWER ? !this.screenOn : keycode === KEYCODE.WAKEUP;
      if (next !== this.screenOn) {
        this.screenOn = next;
        this.contacts.clear();
        this.changed();
      }
      return;
    }
    if (!this.screenOn) return;
    const pkg = this.foregroundPackage();
    switch (keycode) {
      case KEYCODE.HOME:
        this.view = { kind: 'launcher' };
        break;
      case KEYCODE.BACK:
        if (this.view.kind === 'recents' && this.recentPackages[0]) this.view = { kind: 'app', packageName: this.recentPackages[0] };
        else this.view = { kind: 'launcher' };
        break;
      case KEYCODE.APP_SWITCH:
        this.view = this.view.kind === 'recents' && this.recentPackages[0] ? { kind: 'app', packageName: this.recentPackages[0] } : { kind: 'recents' };
        break;
      case KEYCODE.VOLUME_UP:
      case KEYCODE.VOLUME_DOWN:
      case KEYCODE.VOLUME_MUTE:
        this.volume = keycode === KEYCODE.VOLUME_MUTE ? 0 : Math.max(0, Math.min(15, this.volume + (keycode === KEYCODE.VOLUME_UP ? 1 : -1)));
        this.volumeShownUntil = Date.now() + VOLUME_PANEL_MS;
        this.scheduleFade();
        break;
      case KEYCODE.DEL:
        if (!pkg || !this.appState(pkg).focused) return;
        this.appState(pkg).text = [...this.appState(pkg).text].slice(0, -1).join('');
        break;
      case KEYCODE.ENTER:
        if (!pkg || !this.appState(pkg).focused) return;
        this.appState(pkg).status = `Entered: ${this.appState(pkg).text}`;
        break;
      case KEYCODE.PASTE:
        this.typeText(this.clipboard);
        return;
      default: {
        const ch = typedChar(keycode);
        if (ch === undefined) return;
        this.typeText(ch);
        return;
      }
    }
    this.changed();
  }

  typeText(text: string): void {
    const pkg = this.foregroundPackage();
    if (!this.screenOn || !pkg || !text) return;
    const ui = this.appState(pkg);
    if (!ui.focused) return;
    ui.text += text;
    this.changed();
  }

  launch(pkg: string): void {
    if (!this.host.installed().some((p) => p.packageName === pkg)) return;
    this.host.startApp?.(pkg);
    this.showApp(pkg);
  }

  /** An activity of the app came to the front (am start, monkey, a launcher tap). */
  showApp(pkg: string): void {
    this.recentPackages = [pkg, ...this.recentPackages.filter((p) => p !== pkg)].slice(0, 16);
    if (this.view.kind === 'app' && this.view.packageName === pkg) return;
    this.view = { kind: 'app', packageName: pkg };
    this.changed();
  }

  /** The app's process ended (force-stop, uninstall): its screen state is gone, the launcher shows if it was in front. */
  appStopped(pkg: string): void {
    this.appStates.delete(pkg);
    this.recentPackages = this.recentPackages.filter((p) => p !== pkg);
    if (this.view.kind === 'app' && this.view.packageName === pkg) {
      this.view = { kind: 'launcher' };
      this.changed();
    }
  }

  /** The device rebooted: the launcher shows, no app keeps its state. */
  reset(): void {
    this.appStates.clear();
    this.recentPackages = [];
    this.view = { kind: 'launcher' };
    this.screenOn = true;
    this.contacts.clear();
    this.changed();
  }

  png(): Buffer {
    this.render();
    if (this.pngCache?.frame !== this.frame) {
      const data = PNG.sync.write({ width: this.width, height: this.height, data: this.canvas.data } as PNG, { deflateLevel: 1, filterType: 1 });
      this.pngCache = { frame: this.frame, data };
    }
    return this.pngCache.data;
  }

  /** The picture as a JPEG, scaled to width x height (default: the display size). */
  jpeg(quality = 80, width = this.width, height = this.height): Buffer {
    this.render();
    const key = `${this.frame}:${quality}:${width}x${height}`;
    if (this.jpegCache?.key !== key) {
      const data = encodeJpeg(this.canvas.scaled(width, height), width, height, quality);
      this.jpegCache = { key, data };
    }
    return this.jpegCache.data;
  }

  /** The picture's RGBA bytes at the display size (screencap's raw form). */
  rgba(): Buffer {
    this.render();
    return this.canvas.data;
  }

  // ---- internals ---------------------------------------------------------

  private changed(): void {
    this.frame++;
    this.emit('change');
  }

  private render(): void {
    this.refreshAmbient();
    if (this.rendered === this.frame) return;
    const now = Date.now();
    this.lifted = this.lifted.filter((m) => m.until > now);
    const touches: TouchMark[] = [...[...this.contacts.values()].map((c) => ({ x: c.x, y: c.y, down: true })), ...this.lifted.map((m) => ({ x: m.x, y: m.y, down: false }))];
    const battery = this.host.battery();
    renderScreen(this.canvas, {
      metrics: this.metrics, view: this.screenView(), launcherPackage: this.host.launcherPackage, apps: this.launcherApps(), recents: this.recentApps(),
      on: this.screenOn, clock: this.host.clock(), batteryLevel: battery.level, charging: battery.charging, touches,
      volume: this.volumeShownUntil > now ? this.volume : null,
    });
    this.rendered = this.frame;
  }

  private computeAmbientKey(): string {
    const battery = this.host.battery();
    const apps = this.host.installed().filter((p) => p.launchable).map((p) => `${p.packageName}@${p.stamp}`).join(',');
    return `${this.host.clock()}|${battery.level}|${battery.charging}|${apps}`;
  }

  /** A new picture when the clock, the battery or the installed apps changed since the last one. */
  private refreshAmbient(): void {
    const key = this.computeAmbientKey();
    if (key === this.ambientKey) return;
    this.ambientKey = key;
    const installed = new Set(this.host.installed().map((p) => p.packageName));
    this.recentPackages = this.recentPackages.filter((p) => installed.has(p));
    if (this.view.kind === 'app' && !installed.has(this.view.packageName)) this.view = { kind: 'launcher' };
    this.changed();
  }

  private markLifted(x: number, y: number): void {
    this.lifted.push({ x, y, until: Date.now() + TOUCH_MARK_MS });
    this.scheduleFade();
    this.changed();
  }

  /** Redraws once the touch marks and the volume panel have faded. */
  private scheduleFade(): void {
    if (this.fadeTimer) return;
    const wait = Math.max(...this.lifted.map((m) => m.until), this.volumeShownUntil) - Date.now();
    this.fadeTimer = setTimeout(() => {
      this.fadeTimer = undefined;
      this.changed();
      if (this.lifted.some((m) => m.until > Date.now()) || this.volumeShownUntil > Date.now()) this.scheduleFade();
    }, Math.max(10, wait + 5));
    this.fadeTimer.unref();
  }

  private appState(pkg: string): AppUiState {
    let ui = this.appStates.get(pkg);
    if (!ui) {
      ui = { text: '', focused: true, status: '' };
      this.appStates.set(pkg, ui);
    }
    return ui;
  }

  private app(pkg: string): LaunchableApp {
    const info = this.host.installed().find((p) => p.packageName === pkg);
    return { packageName: pkg, label: labelOf(pkg), icon: info ? this.icons.get(info.apkHostPath, info.stamp) : null };
  }

  private launcherApps(): LaunchableApp[] {
    return this.host.installed().filter((p) => p.launchable)
      .map((p) => ({ packageName: p.packageName, label: labelOf(p.packageName), icon: this.icons.get(p.apkHostPath, p.stamp) }))
      .sort((a, b) => a.label.localeCompare(b.label, 'en'));
  }

  private recentApps(): LaunchableApp[] {
    return this.recentPackages.map((p) => this.app(p));
  }

  private screenView(): ScreenView {
    const v = this.view;
    return v.kind === 'app' ? { kind: 'app', app: this.app(v.packageName), ui: this.appState(v.packageName) } : v;
  }
}
