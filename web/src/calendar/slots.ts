/** Choosing a free slot: what a click or a key on a calendar cell proposes, and arrow keys between cells. */
import { atHour, HOUR_MS } from './week';

/** A booking proposed for the hour `hour` of `day`: from then (or now, if that hour has begun) for about an hour. */
export function proposedSlot(day: Date, hour: number, now: number): { start: Date; end: Date } {
  const hourStart = atHour(day, hour).getTime();
  const start = Math.max(hourStart, Math.floor(now / 60_000) * 60_000);
  let end = hourStart + HOUR_MS;
  while (end - start < 30 * 60_000) end += HOUR_MS;
  return { start: new Date(start), end: new Date(end) };
}

/** The hour a pointer chose on a day cell (its x across the cell), or a working hour for a key press. */
export function chosenHour(e: MouseEvent, day: Date, now: number): number {
  const cell = e.currentTarget as HTMLElement;
  if (e.detail === 0) {
    // Keyboard: 09:00, or the next hour on the current day.
    const today = new Date(now).toDateString() === day.toDateString();
    return today ? Math.min(23, new Date(now).getHours() + (new Date(now).getMinutes() > 0 ? 1 : 0)) : 9;
  }
  const rect = cell.getBoundingClientRect();
  return Math.max(0, Math.min(23, Math.floor(((e.clientX - rect.left) / rect.width) * 24)));
}

/**
 * Arrow keys between cells of a grid marked `data-cell="row:col"` inside `container`: the keyboard moves by one cell
 * (rows and columns as the calendar lays them out), Home/End to the row's first and last.
 */
export function moveFocus(e: KeyboardEvent, rows: number, cols: number): void {
  const target = e.target as HTMLElement;
  const at = target.dataset.cell?.split(':').map(Number);
  if (!at) return;
  let [row, col] = at;
  switch (e.key) {
    case 'ArrowUp': row -= 1; break;
    case 'ArrowDown': row += 1; break;
    case 'ArrowLeft': col -= 1; break;
    case 'ArrowRight': col += 1; break;
    case 'Home': col = 0; break;
    case 'End': col = cols - 1; break;
    default: return;
  }
  if (row < 0 || row >= rows || col < 0 || col >= cols) return;
  const next = (e.currentTarget as HTMLElement).querySelector<HTMLElement>(`[data-cell="${row}:${col}"]`);
  if (!next) return;
  e.preventDefault();
  target.tabIndex = -1;
  next.tabIndex = 0;
  next.focus();
}
