/** The booking a user chose on a calendar: who, which device, when, the note, and Cancel for those who may. */
import { useState } from 'preact/hooks';
import type { Reservation, SessionUser } from '../api/types';
import { cancelBooking, mayCancel } from './bookings';
import { rangeLabel } from './week';

interface Props {
  booking: Reservation;
  user: SessionUser;
  /** `series`: the later occurrences went too. */
  onCancelled(id: string, series: boolean): void;
  onClose(): void;
}

export function BookingDetails({ booking, user, onCancelled, onClose }: Props) {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const mine = booking.reservedById === user.id;
  const cancel = async (series: boolean) => {
    setBusy(true);
    setError('');
    try {
      await cancelBooking(booking.id, series);
      onCancelled(booking.id, series);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const cancellable = mayCancel(booking, user) && Date.parse(booking.end) > Date.now();
  return (
    <section class={`booking-details card ${mine ? 'mine' : ''}`} aria-label="Booking" data-testid="booking-details"
      onKeyDown={(e) => e.key === 'Escape' && onClose()}>
      <h3>{mine ? 'Your booking' : `Booked by ${booking.reservedByDisplayName}`}</h3>
      <dl class="facts">
        <dt>Device</dt><dd>{booking.deviceName}</dd>
        <dt>When</dt><dd>{rangeLabel(new Date(booking.start), new Date(booking.end))}</dd>
        {!mine && <><dt>Booked by</dt><dd>{booking.reservedByDisplayName}</dd></>}
        {booking.note && <><dt>Note</dt><dd>{booking.note}</dd></>}
        {booking.seriesId && <><dt>Repeats</dt><dd>weekly (one of a series)</dd></>}
      </dl>
      {error && <p class="error" role="alert">{error}</p>}
      <div class="buttons">
        {cancellable && (
          <button type="button" class="danger" disabled={busy} onClick={() => cancel(false)}>
            {busy ? 'Cancelling…' : mine ? 'Cancel booking' : `Cancel ${booking.reservedByDisplayName}'s booking`}
          </button>
        )}
        {cancellable && booking.seriesId && (
          <button type="button" class="danger" disabled={busy} onClick={() => cancel(true)}>Cancel this and the later weeks</button>
        )}
        <button type="button" onClick={onClose}>Close</button>
      </div>
    </section>
  );
}
