/**
 * The screen of a simulated iPhone or iPad: a home screen with the installed apps (a coloured tile with initials
 * and the app's name) under a status bar with the clock and the battery, drawn at the model's native resolution
 * with the Android screen's canvas and font. What screenshotr captures.
 */
import { Canvas } from '../android/screen/canvas';
import { encodePng } from '../android/screen/frame-store';
import { appColour, initials } from '../android/screen/render';
import { textWidth } from '../android/screen/font';
import type { IosDeviceSpec } from './spec';

/** Native pixels and points-to-pixels scale per model; other models take their class's usual size. */
const DISPLAYS: Record<string, [width: number, height: number, scale: number]> = {
  'iPhone14,5': [1170, 2532, 3],
  'iPhone16,1': [1179, 2556, 3],
  'iPhone12,8': [750, 1334, 2],
  'iPad13,18': [1640, 2360, 2],
};

export interface IosScreenHost {
  spec: IosDeviceSpec;
  /** Display names and bundle ids of the apps the home screen shows. */
  apps(): Array<{ bundleId: string; name: string }>;
  battery(): { level: number; charging: boolean };
}

export class IosScreen {
  readonly width: number;
  readonly height: number;
  private readonly scale: number;
  private readonly canvas: Canvas;
  private readonly clock: Intl.DateTimeFormat;
  private cache: { key: string; png: Buffer } | undefined;
  private frame = 0;

  constructor(private readonly host: IosScreenHost) {
    const [width, height, scale] = DISPLAYS[host.spec.productType] ?? (host.spec.deviceClass === 'iPad' ? [1620, 2160, 2] : [1170, 2532, 3]);
    this.width = width;
    this.height = height;
    this.scale = scale;
    this.canvas = new Canvas(width, height);
    this.clock = new Intl.DateTimeFormat('en-US', { timeZone: host.spec.timezone, hour: 'numeric', minute: '2-digit', hour12: false });
  }

  /** Increments each time the picture changes. */
  get frameNumber(): number {
    this.render();
    return this.frame;
  }

  png(): Buffer {
    this.render();
    return this.cache!.png;
  }

  private render(): void {
    const apps = this.host.apps().sort((a, b) => a.name.localeCompare(b.name, 'en'));
    const battery = this.host.battery();
    const time = this.clock.format(new Date());
    const key = JSON.stringify([apps, battery, time]);
    if (this.cache?.key === key) return;
    this.draw(apps, battery, time);
    this.frame++;
    this.cache = { key, png: encodePng(this.canvas.data, this.width, this.height) };
  }

  private draw(apps: Array<{ bundleId: string; name: string }>, battery: { level: number; charging: boolean }, time: string): void {
    const c = this.canvas;
    const pt = this.scale;
    const text = (size: number) => Math.max(1, Math.round((size * pt) / 7));
    c.fill(0x2b4c7e);
    // Status bar: the clock at the left, the battery at the right.
    const barScale = text(13);
    c.text(28 * pt, 16 * pt, time, barScale, 0xffffff);
    const bw = 26 * pt;
    const bh = 12 * pt;
    const bx = this.width - 28 * pt - bw;
    const by = 16 * pt;
    c.roundRect(bx, by, bw, bh, 3 * pt, 0xffffff);
    c.roundRect(bx + pt, by + pt, bw - 2 * pt, bh - 2 * pt, 2 * pt, 0x2b4c7e);
    c.roundRect(bx + 2 * pt, by + 2 * pt, ((bw - 4 * pt) * battery.level) / 100, bh - 4 * pt, pt, battery.charging ? 0x34c759 : 0xffffff);
    const pct = `${battery.level}%`;
    c.text(bx - 6 * pt - textWidth(pct) * barScale, by, pct, barScale, 0xffffff);
    // The app grid: four columns on an iPhone, six on an iPad, as on the real home screens.
    const columns = this.host.spec.deviceClass === 'iPad' ? 6 : 4;
    const cellW = this.width / columns;
    const icon = 60 * pt;
    const labelScale = text(10);
    apps.forEach((app, i) => {
      const x = (i % columns) * cellW + (cellW - icon) / 2;
      const y = 70 * pt + Math.floor(i / columns) * 100 * pt;
      c.roundRect(x, y, icon, icon, 14 * pt, appColour(app.bundleId));
      const initialsScale = text(22);
      c.centredText(x + icon / 2, y + icon / 2 - (7 * initialsScale) / 2, initials(app.name), initialsScale, 0xffffff);
      c.centredText(x + icon / 2, y + icon + 6 * pt, app.name, labelScale, 0xffffff, cellW - 8 * pt);
    });
    // The dock.
    c.roundRect(10 * pt, this.height - 100 * pt, this.width - 20 * pt, 88 * pt, 30 * pt, 0x4a6a9a);
  }
}
