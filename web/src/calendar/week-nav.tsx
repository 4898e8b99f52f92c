/** Previous week, this week, next week; the week shown and the time zone its hours are in. */
import { useEffect, useState } from 'preact/hooks';
import { addWeeks, timeZoneName, weekLabel, weekStart } from './week';

export function WeekNav({ start, onChange }: { start: Date; onChange(start: Date): void }) {
  const thisWeek = weekStart(new Date()).getTime() === start.getTime();
  return (
    <div class="week-nav" role="group" aria-label="Week">
      <button type="button" aria-label="Previous week" onClick={() => onChange(addWeeks(start, -1))}>‹</button>
      <button type="button" disabled={thisWeek} onClick={() => onChange(weekStart(new Date()))}>Today</button>
      <button type="button" aria-label="Next week" onClick={() => onChange(addWeeks(start, 1))}>›</button>
      <strong data-testid="week-label">{weekLabel(start)}</strong>
      <span class="muted">{timeZoneName()}</span>
    </div>
  );
}

/** The current time, moved on every minute (the calendars' "now" line). */

export function useNow(): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 60_000);
    return () => clearInterval(timer);
  }, []);
  return now;
}
