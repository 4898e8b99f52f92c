/** Draws a simulated Android screen into a canvas from the same layout the view hierarchy reports. */
import { Canvas, Rgb, charsFitting, fitText } from './canvas';
import { HierarchyInput } from './hierarchy';
import { Box, LaunchableApp, Metrics, appScreen, centre, launcherGrid, navBar, recentCards, statusBar, textScale, volumePanel } from './layout';
import { textWidth } from './font';

export interface TouchMark {
  x: number;
  y: number;
  /** A contact still down (filled dot) or one just lifted (ring). */
  down: boolean;
}

export interface RenderInput extends HierarchyInput {
  on: boolean;
  clock: string;
  batteryLevel: number;
  charging: boolean;
  touches: TouchMark[];
  /** Volume 0-15 while the volume panel shows, else null. */
  volume: number | null;
}

const INK = 0x202124;
const WHITE = 0xffffff;
const LAUNCHER_BG = 0x1e3a5f;
const ACCENT = 0x1a73e8;

/** A stable colour of a package name (the tile of an app without an icon, the title bar of its screen). */
export function appColour(packageName: string): Rgb {
  let h = 0;
  for (const ch of packageName) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  const palette = [0xd93025, 0x1e8e3e, 0xf29900, 0x9334e6, 0x12a4af, 0xe8710a, 0x3367d6, 0xc5221f, 0x188038, 0x7627bb];
  return palette[h % palette.length];
}

/** The initials of a label: "Contact Manager" -> "CM", "Chrome" -> "C". */
export function initials(label: string): string {
  const words = label.split(/[\s._-]+/).filter(Boolean);
  return (words.length > 1 ? [...words[0]][0] + [...words[1]][0] : [...(words[0] ?? '?')][0]).toUpperCase();
}

export function renderScreen(c: Canvas, s: RenderInput): void {
  const m = s.metrics;
  if (!s.on) {
    c.fill(0x000000);
    return;
  }
  const view = s.view;
  if (view.kind === 'app') drawApp(c, m, view.app, view.ui.text, view.ui.focused, view.ui.status);
  else {
    c.fill(LAUNCHER_BG);
    if (view.kind === 'recents') drawRecents(c, m, s.recents);
    else drawLauncher(c, m, s.apps);
  }
  drawStatusBar(c, m, s);
  drawNavBar(c, m);
  if (s.volume !== null) drawVolume(c, m, s.volume);
  for (const t of s.touches) {
    if (t.down) c.disc(t.x, t.y, 14 * m.dp, 0xb0bec5);
    else c.ring(t.x, t.y, 18 * m.dp, 3 * m.dp, 0xb0bec5);
  }
}

function drawTile(c: Canvas, m: Metrics, app: LaunchableApp, icon: Box): void {
  const [l, t, r, b] = icon;
  if (app.icon) {
    c.image(app.icon, l, t, r - l, b - t);
    return;
  }
  c.roundRect(l, t, r - l, b - t, 14 * m.dp, appColour(app.packageName));
  const scale = textScale(m, 20);
  const [cx, cy] = centre(icon);
  c.centredText(cx, cy - (7 * scale) / 2, initials(app.label), scale, WHITE);
}

function drawLauncher(c: Canvas, m: Metrics, apps: LaunchableApp[]): void {
  const scale = textScale(m, 9);
  for (const { app, cell, icon, labelY } of launcherGrid(m, apps)) {
    drawTile(c, m, app, icon);
    c.centredText((cell[0] + cell[2]) / 2, labelY, app.label, scale, WHITE, cell[2] - cell[0] - 8 * m.dp);
  }
}

function drawRecents(c: Canvas, m: Metrics, recents: LaunchableApp[]): void {
  const scale = textScale(m, 12);
  for (const { app, card } of recentCards(m, recents)) {
    c.roundRect(card[0], card[1], card[2] - card[0], card[3] - card[1], 12 * m.dp, 0xf1f3f4);
    c.rect(card[0], card[1] + 12 * m.dp, card[2] - card[0], 36 * m.dp, appColour(app.packageName));
    c.text(card[0] + 16 * m.dp, card[1] + 30 * m.dp - (7 * scale) / 2, fitText(app.label, scale, card[2] - card[0] - 32 * m.dp), scale, WHITE);
  }
}

function drawApp(c: Canvas, m: Metrics, app: LaunchableApp, text: string, focused: boolean, status: string): void {
  const l = appScreen(m);
  c.fill(0xfafafa);
  const [tl, tt, tr, tb] = l.titleBar;
  c.rect(tl, tt, tr - tl, tb - tt, appColour(app.packageName));
  const title = textScale(m, 14);
  c.text(16 * m.dp, (tt + tb) / 2 - (7 * title) / 2, fitText(app.label, title, tr - tl - 32 * m.dp), title, WHITE);

  const [fl, ft, fr, fb] = l.field;
  const border = focused ? ACCENT : 0x9aa0a6;
  c.roundRect(fl, ft, fr - fl, fb - ft, 4 * m.dp, border);
  c.roundRect(fl + 2 * m.dp, ft + 2 * m.dp, fr - fl - 4 * m.dp, fb - ft - 4 * m.dp, 3 * m.dp, WHITE);
  const body = textScale(m, 11);
  const shown = text ? tail(text, body, fr - fl - 40 * m.dp) : 'Type here';
  const textY = (ft + fb) / 2 - (7 * body) / 2;
  const drawn = c.text(fl + 12 * m.dp, textY, shown, body, text ? INK : 0x9aa0a6);
  if (focused) c.rect(fl + 12 * m.dp + (text ? drawn : 0), textY - body, Math.max(1, body / 2), 9 * body, ACCENT);

  const [bl, bt, br, bb] = l.button;
  c.roundRect(bl, bt, br - bl, bb - bt, 8 * m.dp, ACCENT);
  c.centredText((bl + br) / 2, (bt + bb) / 2 - (7 * body) / 2, 'Tap me', body, WHITE);
  if (status) c.text(l.status[0], l.status[1], fitText(status, body, l.status[2] - l.status[0]), body, INK);
}

/** The end of a text that fits the width (a field shows where the typing is). */
function tail(text: string, scale: number, maxWidth: number): string {
  const fitting = Math.max(1, charsFitting(scale, maxWidth));
  return [...text.slice(-2 * fitting)].slice(-fitting).join('');
}

function drawStatusBar(c: Canvas, m: Metrics, s: RenderInput): void {
  const [l, t, r, b] = statusBar(m);
  c.rect(l, t, r - l, b - t, 0x000000);
  const scale = textScale(m, 10);
  const y = (t + b) / 2 - (7 * scale) / 2;
  c.text(12 * m.dp, y, s.clock, scale, WHITE);
  const pct = `${s.batteryLevel}%`;
  const bodyW = 18 * m.dp;
  const bodyH = 10 * m.dp;
  const bx = r - 12 * m.dp - bodyW;
  const by = (t + b) / 2 - bodyH / 2;
  c.rect(bx, by, bodyW, bodyH, WHITE);
  c.rect(bx + m.dp, by + m.dp, bodyW - 2 * m.dp, bodyH - 2 * m.dp, 0x000000);
  c.rect(bx + 2 * m.dp, by + 2 * m.dp, ((bodyW - 4 * m.dp) * s.batteryLevel) / 100, bodyH - 4 * m.dp, s.charging ? 0x34a853 : WHITE);
  c.rect(bx + bodyW, by + 3 * m.dp, 2 * m.dp, bodyH - 6 * m.dp, WHITE);
  c.text(bx - 6 * m.dp - textWidth(pct) * scale, y, pct, scale, WHITE);
}

function drawNavBar(c: Canvas, m: Metrics): void {
  const nav = navBar(m);
  const [l, t, r, b] = nav.bar;
  c.rect(l, t, r - l, b - t, 0x000000);
  const scale = textScale(m, 12);
  const [backX, backY] = centre(nav.back);
  c.centredText(backX, backY - (7 * scale) / 2, '<', scale, WHITE);
  const [homeX, homeY] = centre(nav.home);
  c.ring(homeX, homeY, 9 * m.dp, 2 * m.dp, WHITE);
  const [recX, recY] = centre(nav.recents);
  const half = 8 * m.dp;
  c.rect(recX - half, recY - half, 2 * half, 2 * half, WHITE);
  c.rect(recX - half + 2 * m.dp, recY - half + 2 * m.dp, 2 * half - 4 * m.dp, 2 * half - 4 * m.dp, 0x000000);
}

function drawVolume(c: Canvas, m: Metrics, level: number): void {
  const [l, t, r, b] = volumePanel(m);
  c.roundRect(l, t, r - l, b - t, 20 * m.dp, 0x303134);
  const inner = b - t - 16 * m.dp;
  const filled = (inner * level) / 15;
  c.roundRect(l + 12 * m.dp, b - 8 * m.dp - filled, r - l - 24 * m.dp, filled, 4 * m.dp, ACCENT);
}
