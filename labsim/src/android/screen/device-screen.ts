/**
 * The screen of one simulated Android device: UI state (launcher, recents, the foreground app's screen, status
 * bar, touch feedback, power), its view hierarchy and its pixels. Every reader (screencap, minicap, the
 * UiAutomator2 server) reads this one model, so they all see the same picture; input changes it.
 */
import { EventEmitter } from 'node:events';
import { FrameStore } from './frame-store';
import { AppScreens } from './app-screens';
import { ScreenView, UiNode, buildHierarchy, hitTest } from './hierarchy';
import { KEYCODE, typedChar } from './keys';
import { LaunchableApp, Metrics, inside, navBar } from './layout';
import { renderScreen } from './render';
import { AppCatalogue, ScreenHost, ambientKey, pollWhileWatched } from './screen-host';
import { Transients } from './transients';

export type { UiNode } from './hierarchy';
export type { ScreenHost } from './screen-host';

export class DeviceScreen extends EventEmitter {
  readonly width: number;
  readonly height: number;
  private rotationValue: 0 | 1 | 2 | 3 = 0;
  private frame = 0;
  private metrics: Metrics;
  private frames: FrameStore;
  private view: { kind: 'launcher' | 'recents' } | { kind: 'app'; packageName: string } = { kind: 'launcher' };
  private readonly appStates = new AppScreens();
  /** Apps in the order last used, newest first. */
  private recentPackages: string[] = [];
  private screenOn = true;
  private volume = 8;
  private readonly transients = new Transients(() => this.changed());
  private ambientKey = '';
  private readonly apps: AppCatalogue;
  /** What PASTE inserts. */
  clipboard = '';

  constructor(private readonly host: ScreenHost) {
    super();
    // Every stream reading the screen (minicap, the UiAutomator2 server's MJPEG) listens for changes.
    this.setMaxListeners(100);
    this.width = host.width;
    this.height = host.height;
    this.metrics = { width: host.width, height: host.height, dp: host.density / 160 };
    this.frames = new FrameStore(host.width, host.height);
    this.ambientKey = ambientKey(this.host);
    this.apps = new AppCatalogue(host);
    // The clock, the battery and the installed apps change on their own: looked at while someone watches.
    pollWhileWatched(this, 'change', 1000, () => this.refreshAmbient());
  }

  get frameNumber(): number {
    return this.frame;
  }

  /**
   * The display's orientation in quarter turns from the natural one (Surface.ROTATION_*). Turned by a quarter, the
   * display is displayWidth x displayHeight = height x width: the picture, the hierarchy and the coordinates of tap
   * and touch are the display's, as screencap and UiAutomator give them; `width`/`height` stay the panel's.
   */
  get rotation(): 0 | 1 | 2 | 3 {
    return this.rotationValue;
  }

  set rotation(value: 0 | 1 | 2 | 3) {
    if (value === this.rotationValue) return;
    this.rotationValue = value;
    const turned = value % 2 === 1;
    this.metrics = { ...this.metrics, width: turned ? this.height : this.width, height: turned ? this.width : this.height };
    this.frames = new FrameStore(this.metrics.width, this.metrics.height);
    this.transients.clear();
    this.changed();
  }

  get displayWidth(): number {
    return this.metrics.width;
  }

  get displayHeight(): number {
    return this.metrics.height;
  }

  /** The home screen's package (the hierarchy's while no app is in front). */
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
    return buildHierarchy({ metrics: this.metrics, view: this.screenView(), launcherPackage: this.host.launcherPackage, apps: this.apps.launchable(), recents: this.recentApps() });
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
      const app = [...this.apps.launchable(), ...this.recentApps()].find((a) => a.label === target.text);
      if (app) this.launch(app.packageName);
      return;
    }
    this.appStates.tapped(pkg, target);
    this.changed();
  }

  /** One contact's event; 'cancel' lifts it without acting on it (a gesture abandoned, a touch client gone). */
  touch(contact: number, phase: 'down' | 'move' | 'up' | 'cancel', x: number, y: number): void {
    if (!this.screenOn) return;
    const known = this.transients.contacts.get(contact);
    if (phase === 'down') {
      this.transients.contacts.set(contact, { downX: x, downY: y, x, y, moved: false });
    } else if (phase === 'move' && known) {
      known.x = x;
      known.y = y;
      if (Math.hypot(x - known.downX, y - known.downY) > 12 * this.metrics.dp) known.moved = true;
    } else if ((phase === 'up' || phase === 'cancel') && known) {
      this.transients.contacts.delete(contact);
      if (!known.moved && phase === 'up') {
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
        this.transients.clear();
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
        this.transients.showVolume();
        break;
      case KEYCODE.DEL:
        return this.editField((text) => [...text].slice(0, -1).join(''));
      case KEYCODE.ENTER:
        if (!pkg || !this.appStates.state(pkg).focused) return;
        this.appStates.state(pkg).status = `Entered: ${this.appStates.state(pkg).text}`;
        break;
      case KEYCODE.PASTE:
        return this.typeText(this.clipboard);
      default:
        return this.typeText(typedChar(keycode) ?? '');
    }
    this.changed();
  }

  typeText(text: string): void {
    this.editField((current) => current + text);
  }

  /** Replaces the focused field's text (an element's setText or clear). */
  setText(text: string): void {
    this.editField(() => text);
  }

  private editField(edit: (current: string) => string): void {
    const pkg = this.foregroundPackage();
    if (pkg && this.screenOn && this.appStates.edited(pkg, edit) !== undefined) this.changed();
  }

  launch(pkg: string): void {
    if (!this.apps.isInstalled(pkg)) return;
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
    this.appStates.forget(pkg);
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
    this.transients.clear();
    this.changed();
  }

  png(): Buffer {
    this.render();
    return this.frames.png();
  }

  /**
   * The picture as a JPEG, scaled to width x height (default: the display size); `turn` quarter turns clockwise
   * first (a capture projected for another rotation than the display's).
   */
  jpeg(quality = 80, width = this.metrics.width, height = this.metrics.height, turn = 0): Buffer {
    this.render();
    return this.frames.jpeg(quality, width, height, turn);
  }

  /** As `jpeg`, encoded off the event loop where the native encoder loads (the streams' frames). */
  jpegAsync(quality = 80, width = this.metrics.width, height = this.metrics.height, turn = 0): Promise<Buffer> {
    this.render();
    return this.frames.jpegAsync(quality, width, height, turn);
  }

  /** The picture's RGBA bytes, displayWidth x displayHeight (screencap's raw form). */
  rgba(): Buffer {
    this.render();
    return this.frames.canvas.data;
  }

  // ---- internals ---------------------------------------------------------

  private changed(): void {
    this.frame++;
    this.emit('change');
  }

  private render(): void {
    this.refreshAmbient();
    this.frames.draw(this.frame, (canvas) => {
      const battery = this.host.battery();
      renderScreen(canvas, {
        metrics: this.metrics, view: this.screenView(), launcherPackage: this.host.launcherPackage, apps: this.apps.launchable(), recents: this.recentApps(),
        on: this.screenOn, clock: this.host.clock(), batteryLevel: battery.level, charging: battery.charging, touches: this.transients.marks(),
        volume: this.transients.volumeShown() ? this.volume : null,
      });
    });
  }

  /** A new picture when the clock, the battery or the installed apps changed since the last one. */
  private refreshAmbient(): void {
    const key = ambientKey(this.host);
    if (key === this.ambientKey) return;
    this.ambientKey = key;
    const installed = new Set(this.host.installed().map((p) => p.packageName));
    this.recentPackages = this.recentPackages.filter((p) => installed.has(p));
    if (this.view.kind === 'app' && !installed.has(this.view.packageName)) this.view = { kind: 'launcher' };
    this.changed();
  }

  private markLifted(x: number, y: number): void {
    this.transients.markLifted(x, y);
    this.changed();
  }

  private recentApps(): LaunchableApp[] {
    return this.recentPackages.map((p) => this.apps.app(p));
  }

  private screenView(): ScreenView {
    const v = this.view;
    return v.kind === 'app' ? { kind: 'app', app: this.apps.app(v.packageName), ui: this.appStates.state(v.packageName) } : v;
  }
}
