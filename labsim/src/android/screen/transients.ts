/**
 * What a screen shows only for a moment: the touches (a dot under each contact that is down, a ring where one was
 * just lifted) and the volume panel after a volume key. `onFade` is called when something has faded, so the
 * screen draws a new frame without it.
 */
import type { TouchMark } from './render';

/** How long a lifted touch and the volume panel stay visible. */
const TOUCH_MARK_MS = 400;
const VOLUME_PANEL_MS = 1500;

export interface Contact {
  downX: number;
  downY: number;
  x: number;
  y: number;
  /** Moved far enough from where it went down not to be a tap. */
  moved: boolean;
}

export class Transients {
  readonly contacts = new Map<number, Contact>();
  private lifted: Array<{ x: number; y: number; until: number }> = [];
  private volumeUntil = 0;
  private fadeTimer: NodeJS.Timeout | undefined;

  constructor(private readonly onFade: () => void) {}

  markLifted(x: number, y: number): void {
    this.lifted.push({ x, y, until: Date.now() + TOUCH_MARK_MS });
    this.scheduleFade();
  }

  showVolume(): void {
    this.volumeUntil = Date.now() + VOLUME_PANEL_MS;
    this.scheduleFade();
  }

  volumeShown(): boolean {
    return this.volumeUntil > Date.now();
  }

  marks(): TouchMark[] {
    const now = Date.now();
    this.lifted = this.lifted.filter((m) => m.until > now);
    return [...[...this.contacts.values()].map((c) => ({ x: c.x, y: c.y, down: true })), ...this.lifted.map((m) => ({ x: m.x, y: m.y, down: false }))];
  }

  clear(): void {
    this.contacts.clear();
    this.lifted = [];
  }

  private scheduleFade(): void {
    if (this.fadeTimer) return;
    const wait = Math.max(...this.lifted.map((m) => m.until), this.volumeUntil) - Date.now();
    this.fadeTimer = setTimeout(() => {
      this.fadeTimer = undefined;
      this.onFade();
      if (this.lifted.some((m) => m.until > Date.now()) || this.volumeShown()) this.scheduleFade();
    }, Math.max(10, wait + 5));
    this.fadeTimer.unref();
  }
}
