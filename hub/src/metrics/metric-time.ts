/** Metric times are epoch microseconds end to end; JS Dates would cut them to milliseconds. */

/** `2026-11-22T10:00:00.123456Z`: the storage form (a timestamptz literal). */
export function microsToTimestamp(timeUs: number): string {
  const ms = Math.floor(timeUs / 1000);
  const micros = Math.floor(timeUs - ms * 1000);
  const iso = new Date(ms).toISOString(); // ...ss.mmmZ
  return `${iso.slice(0, -1)}${String(micros).padStart(3, '0')}Z`;
}

/** RFC 3339 as InfluxDB 1.x writes it: UTC, fraction only as long as needed (`...:05Z`, `...:05.25Z`). */
export function formatMetricTime(timeUs: number): string {
  return microsToTimestamp(timeUs).replace(/\.?0+Z$/, 'Z');
}
