/** DateTime and TimeSpan codecs of the wire (wire rules 7 and 17, docs/wire-rules.md). */

/** `yyyy-mm-ddThh:mm:ssZ` in UTC, no fractional seconds. */
export function formatWireDate(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** TimeSpan output: total seconds as a number. */
export function formatTimeSpan(milliseconds: number): number {
  return Math.round(milliseconds) / 1000;
}

export interface ParsedRequestDate {
  date: Date;
  /** True when the text carried no time of day (a date-only `toDate` then covers that whole day). */
  dateOnly: boolean;
}

/**
 * The dates a request may carry: those of a .NET DateTime (the vendor's clients), 0001-01-01 to 9999-12-31 in
 * UTC. Outside them a value is refused by name: PostgreSQL has no year 0, and years past 9999 are written
 * `+010000-...` by JavaScript, which no store reads.
 */
export const EARLIEST_REQUEST_DATE = new Date('0001-01-01T00:00:00.000Z');
const LATEST_REQUEST_DATE = new Date('9999-12-31T23:59:59.999Z');
export const REQUEST_DATE_RANGE_TEXT = '0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z (UTC)';

export function isWithinRequestDateRange(date: Date): boolean {
  const ms = date.getTime();
  return ms >= EARLIEST_REQUEST_DATE.getTime() && ms <= LATEST_REQUEST_DATE.getTime();
}

/** Time of day after a date in the culture forms: `h:mm[:ss] [tt]` or `H:mm[:ss]`. */
const CULTURE_TIME = String.raw`(?:\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([AaPp][Mm])?)?$`;
const US_CULTURE = new RegExp(String.raw`^(\d{1,2})\/(\d{1,2})\/(\d{4})` + CULTURE_TIME);
/** `yyyy/MM/dd [H:mm:ss]`, which .NET's DateTime.Parse also accepts (wire rule 27, docs/wire-rules.md). */
const YEAR_FIRST_SLASHED = new RegExp(String.raw`^(\d{4})\/(\d{1,2})\/(\d{1,2})` + CULTURE_TIME);
const ISO_DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_LOCAL = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,7}))?)?$/;
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/i;

/**
 * Parses the request date forms real clients send: ISO 8601 with or without offset, `yyyy-MM-dd`,
 * `yyyy/MM/dd [H:mm:ss]` and US culture `M/d/yyyy h:mm:ss tt`. A value without offset is in the server's time zone.
 * Returns undefined for text that is not a date.
 */
export function parseRequestDate(text: string): ParsedRequestDate | undefined {
  const value = text.trim();
  let m = ISO_DATE_ONLY.exec(value);
  if (m) return local(+m[1], +m[2], +m[3], 0, 0, 0, 0, true);
  m = ISO_LOCAL.exec(value);
  if (m) return local(+m[1], +m[2], +m[3], +m[4], +m[5], +(m[6] ?? 0), fraction(m[7]), false);
  if (ISO_WITH_OFFSET.test(value)) {
    const date = new Date(value.replace(' ', 'T'));
    return Number.isNaN(date.getTime()) ? undefined : { date, dateOnly: false };
  }
  m = US_CULTURE.exec(value);
  if (m) return withCultureTime(+m[3], +m[1], +m[2], m.slice(4));
  m = YEAR_FIRST_SLASHED.exec(value);
  if (m) return withCultureTime(+m[1], +m[2], +m[3], m.slice(4));
  return undefined;
}

/** A culture-form date with its optional time (`[hour, minute, second, AM/PM]`, as CULTURE_TIME captures). */
function withCultureTime(y: number, mo: number, d: number, time: (string | undefined)[]) {
  const [hourText, minute, second, meridiemText] = time;
  let hour = hourText === undefined ? 0 : +hourText;
  const meridiem = meridiemText?.toUpperCase();
  if (meridiem && (hour < 1 || hour > 12)) return undefined;
  if (meridiem === 'PM' && hour < 12) hour += 12;
  if (meridiem === 'AM' && hour === 12) hour = 0;
  return local(y, mo, d, hour, minute === undefined ? 0 : +minute, second === undefined ? 0 : +second, 0,
    hourText === undefined);
}

/** Milliseconds of a fraction of up to 7 digits, truncated (rounding `.9999` up would roll into the next second). */
function fraction(digits: string | undefined): number {
  return digits ? Number(digits.padEnd(3, '0').slice(0, 3)) : 0;
}

function local(y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number, dateOnly: boolean) {
  const date = new Date(2000, 0, 1);
  // setFullYear, not the constructor: `new Date(50, ...)` means 1950.
  date.setFullYear(y, mo - 1, d);
  date.setHours(h, mi, s, ms);
  // Reject rollovers such as 2/30/2024 or 25:00.
  if (date.getFullYear() !== y || date.getMonth() !== mo - 1 || date.getDate() !== d || date.getHours() !== h
    || date.getMinutes() !== mi || s > 59) {
    return undefined;
  }
  return { date, dateOnly };
}
