/** Back, today, forward (by a week, or by a day on the lab's day view); the range shown and the time zone of its hours. */
import { addDays, addWeeks, longDayLabel, startOfDay, timeZoneName, weekLabel, weekStart } from './week';

export type Zoom = 'week' | 'day';

/** The first moment of the range holding `at`. */
export const rangeStart = (zoom: Zoom, at: Date): Date => (zoom === 'week' ? weekStart(at) : startOfDay(at));

export function RangeNav({ zoom, start, onChange }: { zoom: Zoom; start: Date; onChange(start: Date): void }) {
  const step = (n: number) => onChange(zoom === 'week' ? addWeeks(start, n) : addDays(start, n));
  const current = rangeStart(zoom, new Date()).getTime() === start.getTime();
  return (
    <div class="week-nav" role="group" aria-label={zoom === 'week' ? 'Week' : 'Day'}>
      <button type="button" aria-label={`Previous ${zoom}`} onClick={() => step(-1)}>‹</button>
      <button type="button" disabled={current} onClick={() => onChange(rangeStart(zoom, new Date()))}>Today</button>
      <button type="button" aria-label={`Next ${zoom}`} onClick={() => step(1)}>›</button>
      <strong data-testid="week-label">{zoom === 'week' ? weekLabel(start) : longDayLabel(start)}</strong>
      <span class="muted" title="Times are shown in this time zone">{timeZoneName()}</span>
    </div>
  );
}
