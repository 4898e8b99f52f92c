/**
 * The lab's week as a timeline: a row per device, the seven days across, each booking a block labelled with its
 * booker (one's own in the accent colour), the current time as a line. A day cell books that device from the hour
 * pointed at (Enter: 09:00, or the next hour today); arrow keys move between cells.
 */
import type { Reservation } from '../api/types';
import { linkClick } from '../router';
import { chosenHour, moveFocus, proposedSlot } from './slots';
import type { SlotChoice } from './booking-form';
import { dayLabel, dayPosition, rangeLabel, timeLabel } from './week';

interface Props {
  days: Date[];
  devices: { id: string; name: string }[];
  bookings: Reservation[];
  userId: string;
  now: number;
  /** Absent for users who may not book. */
  onSlot?: (slot: SlotChoice) => void;
  onSelect(booking: Reservation): void;
  selectedId?: string;
}

export function LabTimeline({ days, devices, bookings, userId, now, onSlot, onSelect, selectedId }: Props) {
  const byDevice = new Map<string, Reservation[]>();
  for (const b of bookings) byDevice.set(b.deviceId, [...(byDevice.get(b.deviceId) ?? []), b]);
  const nowAt = now >= days[0].getTime() && now < days[7].getTime() ? dayPosition(days, now) : undefined;
  const today = new Date(now).toDateString();
  return (
    <div class="timeline-scroll">
      <div class="timeline" data-testid="lab-calendar" onKeyDown={(e) => moveFocus(e, devices.length, 7)}>
        <div class="timeline-head">
          <span class="muted">Device</span>
          {days.slice(0, 7).map((d) => <span key={d.getTime()} class={d.toDateString() === today ? 'today' : ''}>{dayLabel(d)}</span>)}
        </div>
        {devices.map((device, row) => (
          <div class="timeline-row" key={device.id} data-device={device.name}>
            <a class="timeline-device" href={`/devices/${device.id}`} onClick={(e) => linkClick(e, `/devices/${device.id}`)}>{device.name}</a>
            <div class="timeline-track">
              {days.slice(0, 7).map((day, col) => {
                const past = days[col + 1].getTime() <= now;
                const label = `${onSlot ? 'Book' : 'Free time on'} ${device.name} on ${dayLabel(day)}`;
                return onSlot
                  ? <button type="button" key={col} class="cell" data-cell={`${row}:${col}`} tabIndex={row === 0 && col === 0 ? 0 : -1}
                    aria-label={label} aria-disabled={past} title={past ? undefined : 'Book from this hour'}
                    onClick={(e) => !past && onSlot({ deviceId: device.id, ...proposedSlot(day, chosenHour(e, day, false, now), now) })} />
                  : <span key={col} class="cell" />;
              })}
              {(byDevice.get(device.id) ?? []).map((b) => {
                const start = Date.parse(b.start);
                const end = Date.parse(b.end);
                const left = dayPosition(days, start) / 7;
                const width = Math.max(dayPosition(days, end) / 7 - left, 0.004);
                const mine = b.reservedById === userId;
                return (
                  <button type="button" key={b.id} class={`booking ${mine ? 'mine' : ''} ${end <= now ? 'past' : ''} ${b.id === selectedId ? 'selected' : ''}`}
                    style={{ left: `${left * 100}%`, width: `${width * 100}%` }} data-testid="booking"
                    aria-label={`${device.name} booked by ${mine ? 'you' : b.reservedByDisplayName}, ${rangeLabel(new Date(start), new Date(end))}`}
                    title={`${b.reservedByDisplayName}: ${rangeLabel(new Date(start), new Date(end))}${b.note ? ` — ${b.note}` : ''}`}
                    onClick={() => onSelect(b)}>
                    <span class="who">{b.reservedByDisplayName}{mine ? ' (you)' : ''}</span>
                    <small>{timeLabel(new Date(start))}–{timeLabel(new Date(end))}</small>
                  </button>
                );
              })}
              {nowAt !== undefined && <span class="now-line" style={{ left: `${(nowAt / 7) * 100}%` }} aria-hidden="true" />}
            </div>
          </div>
        ))}
      </div>
    </div>
  );
}
