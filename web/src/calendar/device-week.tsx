/**
 * One device's week: days as columns, hours as rows, bookings as blocks labelled with the booker (one's own in
 * the accent colour), the current time as a line across today. An hour cell books from that hour; arrow keys move
 * between cells (up and down an hour, left and right a day).
 */
import { useEffect, useRef } from 'preact/hooks';
import { BookingBlock } from './booking-block';
import { moveFocus, proposedSlot } from './slots';
import type { BookingViewProps } from './booking-form';
import { atHour, dayLabel, daySegment, hourLabel, timeLabel } from './week';

interface Props extends BookingViewProps {
  deviceId: string;
  deviceName: string;
  days: Date[];
}

const HOURS = Array.from({ length: 24 }, (_, h) => h);

export function DeviceWeek({ deviceId, deviceName, days, bookings, userId, now, onSlot, onSelect, selectedId }: Props) {
  const scroller = useRef<HTMLDivElement>(null);
  // Open on the working day (or the current hour), not on midnight.
  useEffect(() => {
    const el = scroller.current;
    if (el) el.scrollTop = (Math.max(0, Math.min(new Date(now).getHours() - 1, 8)) / 24) * (el.scrollHeight - 40);
  }, []);
  const today = new Date(now).toDateString();
  return (
    <div class="week" data-testid="device-calendar">
      <div class="week-scroll" ref={scroller} onKeyDown={(e) => moveFocus(e, 24, 7)}>
        <div class="week-head">
          <span />
          {days.slice(0, 7).map((d) => <span key={d.getTime()} class={d.toDateString() === today ? 'today' : ''}>{dayLabel(d)}</span>)}
        </div>
        <div class="week-body">
          <div class="week-hours" aria-hidden="true">{HOURS.map((h) => <span key={h}>{hourLabel(atHour(days[0], h))}</span>)}</div>
          {days.slice(0, 7).map((day, col) => {
            const dayEnd = days[col + 1];
            const isToday = day.toDateString() === today;
            const dayName = dayLabel(day);
            const nowTop = isToday ? daySegment(day, dayEnd, day.getTime(), now)?.height : undefined;
            return (
              <div class={`week-day ${isToday ? 'today' : ''}`} key={day.getTime()}>
                {HOURS.map((h) => {
                  const past = atHour(day, h + 1).getTime() <= now;
                  return onSlot
                    ? <button type="button" key={h} class="cell" data-cell={`${h}:${col}`} tabIndex={h === 9 && col === 0 ? 0 : -1}
                      aria-label={`Book ${deviceName} from ${dayName} ${timeLabel(atHour(day, h))}`} aria-disabled={past}
                      onClick={() => !past && onSlot({ deviceId, ...proposedSlot(day, h, now) })} />
                    : <span key={h} class="cell" />;
                })}
                {bookings.map((b) => {
                  const part = daySegment(day, dayEnd, Date.parse(b.start), Date.parse(b.end));
                  return part && <BookingBlock key={b.id} booking={b} userId={userId} now={now} selected={b.id === selectedId}
                    position={{ top: `${part.top * 100}%`, height: `${part.height * 100}%` }} onSelect={onSelect} />;
                })}
                {nowTop !== undefined && <span class="now-line" style={{ top: `${nowTop * 100}%` }} aria-hidden="true" />}
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
