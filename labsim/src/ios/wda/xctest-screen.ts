/**
 * What an iPhone shows, as WebDriverAgent sees it through XCTest: SpringBoard's home screen (the device's
 * IosScreen picture, with an icon element per app where that picture draws it), or the app in front (a navigation
 * bar with its name and a text field). Sizes are in points, pictures in pixels (points x scale). Tapping an icon
 * opens its app; the home button returns to SpringBoard.
 */
import { encodeJpeg } from '../../android/screen/jpeg-encoder';
import { PNG } from 'pngjs';
import { Canvas, fitText } from '../../android/screen/canvas';
import type { IosAppRegistry } from '../apps';
import type { IosScreen } from '../ios-screen';

export const SPRINGBOARD = 'com.apple.springboard';

/** An element of the XCUIElement tree. */
export interface WdaNode {
  type: string;
  name: string | null;
  label: string | null;
  value: string | null;
  /** x, y, width, height in points. */
  rect: [number, number, number, number];
  enabled: boolean;
  accessible: boolean;
  children: WdaNode[];
}

/** Screen points and scale of each product (the display's logical size). */
const DISPLAYS: Record<string, { width: number; height: number; scale: number }> = {
  'iPhone14,5': { width: 390, height: 844, scale: 3 },
  'iPhone16,1': { width: 393, height: 852, scale: 3 },
  'iPhone12,8': { width: 375, height: 667, scale: 2 },
  'iPad13,18': { width: 820, height: 1180, scale: 2 },
};

const STATUS_BAR_PT = 47;
const ICON_PT = 60;

const node = (type: string, rect: WdaNode['rect'], extra: Partial<WdaNode> = {}): WdaNode => ({
  type, name: null, label: null, value: null, rect, enabled: true, accessible: false, children: [], ...extra,
});

export class XctestScreen {
  readonly width: number;
  readonly height: number;
  readonly scale: number;
  private active = SPRINGBOARD;
  private readonly running = new Set<string>();
  /** Text typed into each app's field. */
  private readonly typed = new Map<string, string>();
  /** The newest picture, kept until what it shows changes (drawing and encoding one takes long in JavaScript). */
  private picture: { key: string; png?: Buffer; jpegs: Map<string, Buffer> } | undefined;

  constructor(productType: string, private readonly apps: IosAppRegistry, private readonly homeScreen: IosScreen) {
    const d = DISPLAYS[productType] ?? DISPLAYS['iPhone14,5'];
    this.width = d.width;
    this.height = d.height;
    this.scale = d.scale;
  }

  get statusBarHeight(): number {
    return STATUS_BAR_PT;
  }

  activeBundle(): string {
    if (this.active !== SPRINGBOARD && !this.apps.get(this.active)) this.active = SPRINGBOARD;
    return this.active;
  }

  displayName(bundleId: string): string {
    if (bundleId === SPRINGBOARD) return 'SpringBoard';
    const a = this.apps.get(bundleId)?.attributes;
    return String(a?.CFBundleDisplayName ?? a?.CFBundleName ?? bundleId.split('.').pop());
  }

  /** XCUIApplicationState: 1 not running, 3 running in the background, 4 running in the foreground. */
  state(bundleId: string): number {
    if (bundleId === SPRINGBOARD) return 4;
    if (!this.apps.get(bundleId)) return 0;
    if (this.activeBundle() === bundleId) return 4;
    return this.running.has(bundleId) ? 3 : 1;
  }

  /** Opens (or brings to the front) an installed app; false when it is not installed. */
  launch(bundleId: string): boolean {
    if (bundleId === SPRINGBOARD) return this.home(), true;
    if (!this.apps.get(bundleId)) return false;
    this.running.add(bundleId);
    this.active = bundleId;
    return true;
  }

  terminate(bundleId: string): boolean {
    const was = this.running.delete(bundleId);
    if (this.active === bundleId) this.active = SPRINGBOARD;
    return was;
  }

  home(): void {
    this.active = SPRINGBOARD;
  }

  /** The home screen's icons where IosScreen draws them: sorted by name, 4 columns (6 on an iPad), 100 pt rows from 70 pt. */
  private iconRects(): Array<{ bundleId: string; label: string; rect: WdaNode['rect'] }> {
    const columns = this.width >= 700 ? 6 : 4;
    const cell = this.width / columns;
    return this.apps.list('Any')
      .map((a) => ({ bundleId: a.bundleId, label: this.displayName(a.bundleId) }))
      .sort((a, b) => a.label.localeCompare(b.label, 'en'))
      .map((a, i) => ({ ...a, rect: [Math.round((i % columns) * cell + (cell - ICON_PT) / 2), 70 + Math.floor(i / columns) * 100, ICON_PT, ICON_PT] }));
  }

  /** The tree of the app in front (XCUIElementTypeApplication at its root). */
  tree(): WdaNode {
    const full: WdaNode['rect'] = [0, 0, this.width, this.height];
    const active = this.activeBundle();
    const name = this.displayName(active);
    if (active === SPRINGBOARD) {
      const icons = this.iconRects().map((i) => node('XCUIElementTypeIcon', i.rect, { name: i.label, label: i.label, accessible: true }));
      const page = node('XCUIElementTypeOther', full, { children: [node('XCUIElementTypeOther', full, { name: 'Home screen icons', label: 'Home screen icons', children: icons })] });
      return node('XCUIElementTypeApplication', full, { name: ' ', label: ' ', children: [node('XCUIElementTypeWindow', full, { children: [page] })] });
    }
    const bar = node('XCUIElementTypeNavigationBar', [0, STATUS_BAR_PT, this.width, 44], { name, children: [node('XCUIElementTypeStaticText', [Math.round(this.width / 2 - 60), STATUS_BAR_PT + 11, 120, 22], { name, label: name, value: name, accessible: true })] });
    const field = node('XCUIElementTypeTextField', [16, STATUS_BAR_PT + 64, this.width - 32, 44], { name: 'input', label: '', value: this.typed.get(active) ?? '', accessible: true });
    const content = node('XCUIElementTypeOther', full, { children: [bar, field] });
    return node('XCUIElementTypeApplication', full, { name, label: name, children: [node('XCUIElementTypeWindow', full, { children: [content] })] });
  }

  /**
   * One finger's gesture from its touch down to its lift, in points: one that stays where it went down is a tap
   * (held for half a second or more, a long press, which opens no app: SpringBoard shows an icon's menu); a moved
   * one is a swipe.
   */
  gesture(from: [number, number], to: [number, number], heldMs: number): void {
    if (Math.abs(from[0] - to[0]) < 10 && Math.abs(from[1] - to[1]) < 10) {
      if (heldMs < 500) this.tap(to[0], to[1]);
    } else this.swipe(from, to);
  }

  /** On an iPhone without a home button (Face ID models), a swipe up from the bottom edge goes to the home screen. */
  swipe(from: [number, number], to: [number, number]): void {
    const hasHomeIndicator = this.height >= 812 && this.width < 700;
    if (hasHomeIndicator && from[1] >= this.height - 34 && from[1] - to[1] >= 100) this.home();
  }

  /** A tap at points (x, y): an icon on the home screen opens its app. */
  tap(x: number, y: number): void {
    if (this.activeBundle() !== SPRINGBOARD) return;
    const icon = this.iconRects().find(({ rect: [l, t, w, h] }) => x >= l && x < l + w && y >= t && y < t + h);
    if (icon) this.launch(icon.bundleId);
  }

  /** Typed text goes to the front app's text field. */
  type(text: string): void {
    const active = this.activeBundle();
    if (active === SPRINGBOARD) return;
    let value = this.typed.get(active) ?? '';
    for (const ch of text) value = ch === '\b' ? value.slice(0, -1) : value + ch;
    this.typed.set(active, value);
  }

  clearText(): void {
    this.typed.delete(this.activeBundle());
  }

  /** What the picture shows now: it is drawn again only when this changes. */
  private pictureKey(): string {
    const active = this.activeBundle();
    if (active === SPRINGBOARD) return `home ${this.homeScreen.frameNumber}`;
    return JSON.stringify([active, this.typed.get(active) ?? '', Math.floor(Date.now() / 60_000)]);
  }

  private current(): { key: string; png?: Buffer; jpegs: Map<string, Buffer> } {
    const key = this.pictureKey();
    if (this.picture?.key !== key) this.picture = { key, jpegs: new Map() };
    return this.picture;
  }

  /** The picture: the device's own home screen, or the app in front (what screenshotr and WDA's screenshot show). */
  png(): Buffer {
    if (this.activeBundle() === SPRINGBOARD) return this.homeScreen.png();
    const picture = this.current();
    if (!picture.png) {
      const c = this.renderApp();
      picture.png = PNG.sync.write({ width: c.width, height: c.height, data: c.data } as PNG, { deflateLevel: 1, filterType: 1 });
    }
    return picture.png;
  }

  /** The picture as JPEG, scaled to `percent` of its pixels (WDA's MJPEG frames). */
  jpeg(quality: number, percent = 100): Buffer {
    const picture = this.current();
    const kept = picture.jpegs.get(`${quality} ${percent}`);
    if (kept) return kept;
    const encoded = this.encodeJpeg(quality, percent);
    if (picture.jpegs.size >= 4) picture.jpegs.clear();
    picture.jpegs.set(`${quality} ${percent}`, encoded);
    return encoded;
  }

  private encodeJpeg(quality: number, percent: number): Buffer {
    let c: Canvas;
    if (this.activeBundle() === SPRINGBOARD) {
      const home = PNG.sync.read(this.homeScreen.png());
      c = new Canvas(home.width, home.height);
      home.data.copy(c.data);
    } else c = this.renderApp();
    const width = Math.max(1, Math.round((c.width * percent) / 100));
    const height = Math.max(1, Math.round((c.height * percent) / 100));
    return encodeJpeg(percent === 100 ? c.data : c.scaled(width, height), width, height, quality);
  }

  private renderApp(): Canvas {
    const s = this.scale;
    const c = new Canvas(this.width * s, this.height * s);
    const active = this.activeBundle();
    c.fill(0xf2f2f7);
    const clock = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', hour12: false }).format(new Date());
    c.text(24 * s, 16 * s, clock, s * 2, 0x000000);
    c.rect(0, STATUS_BAR_PT * s, this.width * s, 44 * s, 0xf9f9f9);
    c.centredText((this.width / 2) * s, (STATUS_BAR_PT + 15) * s, fitText(this.displayName(active), s * 2, this.width * s), s * 2, 0x000000);
    c.roundRect(16 * s, (STATUS_BAR_PT + 64) * s, (this.width - 32) * s, 44 * s, 8 * s, 0xffffff);
    c.text(24 * s, (STATUS_BAR_PT + 80) * s, this.typed.get(active) ?? '', s * 2, 0x000000);
    return c;
  }
}
