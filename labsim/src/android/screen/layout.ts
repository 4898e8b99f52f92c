/**
 * Where everything sits on a simulated Android screen, in pixels, from the display size and density: the status
 * bar, the navigation bar, the launcher's grid, the recents list and an app's screen. The renderer draws these
 * boxes and the view hierarchy reports them, so what a client sees and what it taps are the same places.
 */

export type Box = [left: number, top: number, right: number, bottom: number];

export interface Metrics {
  width: number;
  height: number;
  /** Pixels per density-independent pixel (density / 160). */
  dp: number;
}

/** An installed app the launcher shows. */
export interface LaunchableApp {
  packageName: string;
  label: string;
  /** Decoded RGBA icon from the APK, or null for a coloured tile with the label's initials. */
  icon: { width: number; height: number; data: Buffer } | null;
}

export const box = (x: number, y: number, w: number, h: number): Box => [Math.round(x), Math.round(y), Math.round(x + w), Math.round(y + h)];
export const inside = (b: Box, x: number, y: number): boolean => x >= b[0] && x < b[2] && y >= b[1] && y < b[3];
export const centre = (b: Box): [number, number] => [(b[0] + b[2]) / 2, (b[1] + b[3]) / 2];

/** Text scale (screen pixels per font pixel) for a text about `sizeDp` tall. */
export function textScale(m: Metrics, sizeDp: number): number {
  return Math.max(1, Math.round((sizeDp * m.dp) / 7));
}

export function statusBar(m: Metrics): Box {
  return box(0, 0, m.width, 24 * m.dp);
}

export interface NavBar {
  bar: Box;
  back: Box;
  home: Box;
  recents: Box;
}

export function navBar(m: Metrics): NavBar {
  const h = 48 * m.dp;
  const top = m.height - h;
  const slot = Math.min(m.width / 3, 160 * m.dp);
  const left = (m.width - 3 * slot) / 2;
  return { bar: box(0, top, m.width, h), back: box(left, top, slot, h), home: box(left + slot, top, slot, h), recents: box(left + 2 * slot, top, slot, h) };
}

/** The area between the status bar and the navigation bar. */
export function content(m: Metrics): Box {
  return [0, statusBar(m)[3], m.width, navBar(m).bar[1]];
}

export interface LauncherCell {
  app: LaunchableApp;
  /** The clickable cell (icon and label). */
  cell: Box;
  icon: Box;
  labelY: number;
}

/** The launcher's grid: four columns on phones (more on wide screens), as many rows as fit; apps past that are not shown. */
export function launcherGrid(m: Metrics, apps: LaunchableApp[]): LauncherCell[] {
  const area = content(m);
  const columns = Math.max(4, Math.floor(m.width / (110 * m.dp)));
  const cellW = m.width / columns;
  const cellH = 100 * m.dp;
  const top = area[1] + 32 * m.dp;
  const rows = Math.max(1, Math.floor((area[3] - top) / cellH));
  const iconSize = 56 * m.dp;
  return apps.slice(0, rows * columns).map((app, i) => {
    const x = (i % columns) * cellW;
    const y = top + Math.floor(i / columns) * cellH;
    return { app, cell: box(x, y, cellW, cellH), icon: box(x + (cellW - iconSize) / 2, y + 8 * m.dp, iconSize, iconSize), labelY: Math.round(y + 72 * m.dp) };
  });
}

export interface RecentCard {
  app: LaunchableApp;
  card: Box;
}

/** The recents screen: one card per recently used app, newest at the top. */
export function recentCards(m: Metrics, apps: LaunchableApp[]): RecentCard[] {
  const area = content(m);
  const h = 96 * m.dp;
  const gap = 16 * m.dp;
  const fit = Math.max(1, Math.floor((area[3] - area[1] - gap) / (h + gap)));
  return apps.slice(0, fit).map((app, i) => ({ app, card: box(24 * m.dp, area[1] + gap + i * (h + gap), m.width - 48 * m.dp, h) }));
}

export interface AppScreenLayout {
  page: Box;
  titleBar: Box;
  field: Box;
  button: Box;
  status: Box;
}

/** An app's screen: a title bar with its label, a text field, a button and a line of status text. */
export function appScreen(m: Metrics): AppScreenLayout {
  const area = content(m);
  const margin = 16 * m.dp;
  const titleBar = box(0, area[1], m.width, 56 * m.dp);
  const field = box(margin, titleBar[3] + 24 * m.dp, m.width - 2 * margin, 56 * m.dp);
  const button = box(margin, field[3] + 16 * m.dp, Math.min(m.width - 2 * margin, 160 * m.dp), 48 * m.dp);
  const status = box(margin, button[3] + 16 * m.dp, m.width - 2 * margin, 32 * m.dp);
  return { page: area, titleBar, field, button, status };
}

/** The volume panel shown for a moment after a volume key. */
export function volumePanel(m: Metrics): Box {
  return box(m.width - 64 * m.dp, m.height * 0.3, 40 * m.dp, 180 * m.dp);
}

/**
 * A point of the touch panel (natural orientation, panelWidth x panelHeight pixels) in the coordinates of the
 * display turned by `rotation` quarter turns (ROTATION_90: the natural top edge is on the left).
 */
export function panelToDisplay(rotation: number, panelWidth: number, panelHeight: number, x: number, y: number): [number, number] {
  switch (rotation) {
    case 1:
      return [y, panelWidth - 1 - x];
    case 2:
      return [panelWidth - 1 - x, panelHeight - 1 - y];
    case 3:
      return [panelHeight - 1 - y, x];
    default:
      return [x, y];
  }
}
