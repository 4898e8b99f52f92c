/** A booking drawn on a calendar: its booker (one's own marked "(you)" in the accent colour) and its times. */
import type { Reservation } from '../api/types';
import { rangeLabel, timeLabel } from './week';

interface Props {
  booking: Reservation;
  userId: string;
  now: number;
  selected: boolean;
  /** Where the block sits in its track or day (the view's own geometry). */
  position: { left: string; width: string } | { top: string; height: string };
  /** The device, named in the label where rows are devices (the lab timeline); absent on a device's own week. */
  deviceName?: string;
  onSelect(booking: Reservation): void;
}

export function BookingBlock({ booking: b, userId, now, selected, position, deviceName, onSelect }: Props) {
  const start = new Date(b.start);
  const end = new Date(b.end);
  const mine = b.reservedById === userId;
  const when = rangeLabel(start, end);
  return (
    <button type="button" class={`booking ${mine ? 'mine' : ''} ${end.getTime() <= now ? 'past' : ''} ${selected ? 'selected' : ''}`}
      style={position} data-testid="booking"
      aria-label={`${deviceName ? `${deviceName} booked by` : 'Booked by'} ${mine ? 'you' : b.reservedByDisplayName}, ${when}`}
      title={`${b.reservedByDisplayName}: ${when}${b.note ? ` — ${b.note}` : ''}`}
      onClick={() => onSelect(b)}>
      <span class="who">{b.reservedByDisplayName}{mine ? ' (you)' : ''}</span>
      <small>{timeLabel(start)}–{timeLabel(end)}</small>
    </button>
  );
}
