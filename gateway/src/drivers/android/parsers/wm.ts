/** `wm size` / `wm density`: the Override line wins over the Physical one (it is what apps see). */
import { lines } from './text';

interface ScreenSize { width: number; height: number }

export function parseWmSize(text: string): ScreenSize | undefined {
  let physical: ScreenSize | undefined;
  let override: ScreenSize | undefined;
  for (const line of lines(text)) {
    const m = /^\s*(Physical|Override) size:\s*(\d+)x(\d+)/.exec(line);
    if (!m) continue;
    const size = { width: Number(m[2]), height: Number(m[3]) };
    if (m[1] === 'Override') override = size;
    else physical = size;
  }
  return override ?? physical;
}

export function parseWmDensity(text: string): number | undefined {
  let physical: number | undefined;
  let override: number | undefined;
  for (const line of lines(text)) {
    const m = /^\s*(Physical|Override) density:\s*(\d+)/.exec(line);
    if (!m) continue;
    if (m[1] === 'Override') override = Number(m[2]);
    else physical = Number(m[2]);
  }
  return override ?? physical;
}

/** Smallest width in dp: min(w, h) * 160 / density. */
export function smallestWidthDp(size: ScreenSize, density: number): number {
  return (Math.min(size.width, size.height) * 160) / density;
}
