/**
 * Calendar time in the browser's own time zone: weeks start on Monday at local midnight, days are local days
 * (23 or 25 hours across a daylight-saving change, so positions are taken within each day, not as 1/168 of a week).
 */

export const HOUR_MS = 3_600_000;

/** Local midnight of the Monday of the week holding `at`. */
export function weekStart(at: Date): Date {
  const day = new Date(at.getFullYear(), at.getMonth(), at.getDate());
  const sinceMonday = (day.getDay() + 6) % 7;
  return new Date(day.getFullYear(), day.getMonth(), day.getDate() - sinceMonday);
}

/** The 8 local midnights bounding the 7 days of the week starting at `start`. */
export function dayBounds(start: Date): Date[] {
  return Array.from({ length: 8 }, (_, i) => new Date(start.getFullYear(), start.getMonth(), start.getDate() + i));
}

export function addWeeks(start: Date, weeks: number): Date {
  return new Date(start.getFullYear(), start.getMonth(), start.getDate() + 7 * weeks);
}

/** The local time `hour` o'clock of the day starting at `day`. */
export function atHour(day: Date, hour: number): Date {
  return new Date(day.getFullYear(), day.getMonth(), day.getDate(), hour);
}

/** The 25 local hours bounding the hours of the day starting at `day` (the lab timeline zoomed to a day). */
export function hourBounds(day: Date): Date[] {
  return Array.from({ length: 25 }, (_, h) => new Date(day.getFullYear(), day.getMonth(), day.getDate(), h));
}

export function startOfDay(at: Date): Date {
  return new Date(at.getFullYear(), at.getMonth(), at.getDate());
}

export function addDays(day: Date, days: number): Date {
  return new Date(day.getFullYear(), day.getMonth(), day.getDate() + days);
}

/**
 * Where `t` falls among the columns `bounds` delimits, 0..columns (a fraction within its own column, so a 23- or
 * 25-hour day still fills exactly its column); clamped to the range.
 */
export function columnPosition(bounds: Date[], t: number): number {
  if (t <= bounds[0].getTime()) return 0;
  const columns = bounds.length - 1;
  for (let i = 0; i < columns; i++) {
    const from = bounds[i].getTime();
    const to = bounds[i + 1].getTime();
    if (t < to) return i + (t - from) / (to - from);
  }
  return columns;
}

/** A booking's part within one day: its top and height as fractions of the day (0..1), or undefined if none. */
export function daySegment(dayFrom: Date, dayTo: Date, start: number, end: number): { top: number; height: number } | undefined {
  const from = Math.max(start, dayFrom.getTime());
  const to = Math.min(end, dayTo.getTime());
  if (to <= from) return undefined;
  const length = dayTo.getTime() - dayFrom.getTime();
  return { top: (from - dayFrom.getTime()) / length, height: (to - from) / length };
}

const dayFormat = new Intl.DateTimeFormat(undefined, { weekday: 'short', day: 'numeric', month: 'short' });
const timeFormat = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' });
const longDayFormat = new Intl.DateTimeFormat(undefined, { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' });
const dateTimeFormat = new Intl.DateTimeFormat(undefined, { weekday: 'short', day: 'numeric', month: 'short', hour: 'numeric', minute: '2-digit' });

export const dayLabel = (d: Date): string => dayFormat.format(d);
const hourFormat = new Intl.DateTimeFormat(undefined, { hour: 'numeric' });
export const hourLabel = (d: Date): string => hourFormat.format(d);
export const longDayLabel = (d: Date): string => longDayFormat.format(d);
export const timeLabel = (d: Date): string => timeFormat.format(d);
const dateTimeLabel = (d: Date): string => dateTimeFormat.format(d);

/** "Mon 30 Nov 09:00 – 17:00", or both dates when a booking spans days. */
export function rangeLabel(start: Date, end: Date): string {
  const sameDay = start.toDateString() === new Date(end.getTime() - 1).toDateString();
  return `${dateTimeLabel(start)} – ${sameDay ? timeLabel(end) : dateTimeLabel(end)}`;
}

const shortDayFormat = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short' });

/** "30 Nov – 6 Dec 2026" for the week starting at `start`. */
export function weekLabel(start: Date): string {
  const last = new Date(start.getFullYear(), start.getMonth(), start.getDate() + 6);
  return `${shortDayFormat.format(start)} – ${shortDayFormat.format(last)} ${last.getFullYear()}`;
}

// Read once, like the formatters above, which keep the time zone of the moment they were made.
const zoneName = new Intl.DateTimeFormat().resolvedOptions().timeZone;
/** The browser's time zone name, shown beside the calendars so nobody wonders whose hours these are. */
export const timeZoneName = (): string => zoneName;

/** The value of an `<input type="datetime-local">` for a local time (minutes). */
export function toLocalInput(d: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** An `<input type="datetime-local">` value read as local time; undefined when empty or malformed. */
export function fromLocalInput(value: string): Date | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})/.exec(value);
  return m ? new Date(+m[1], +m[2] - 1, +m[3], +m[4], +m[5]) : undefined;
}

/** A wire date for the API (UTC, whole seconds). */
export const toWire = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
