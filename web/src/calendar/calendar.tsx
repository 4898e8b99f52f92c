/**
 * A booking calendar, for the whole lab (a timeline of every device) or for one device (its week by hours):
 * week navigation, booking a chosen free slot, a booking's details with Cancel, and live updates of everyone's
 * bookings. Users without DeviceConnect see the calendar but are offered no booking.
 */
import { useMemo, useState } from 'preact/hooks';
import type { Reservation, SessionUser } from '../api/types';
import { useLive } from '../live/use-live';
import { useNow } from '../live/use-now';
import { may } from '../session';
import { BookingDetails } from './booking-details';
import { BookingForm, type SlotChoice } from './booking-form';
import { useBookings } from './bookings';
import { DeviceWeek } from './device-week';
import { LabTimeline } from './lab-timeline';
import { dayBounds, hourBounds, HOUR_MS, rangeLabel } from './week';
import { rangeStart, RangeNav, type Zoom } from './week-nav';

interface Props {
  user: SessionUser;
  /** One device's calendar; absent: the lab's. */
  device?: { id: string; name: string };
}

export function Calendar({ user, device }: Props) {
  // A device's calendar is always a week by hours; the lab's timeline shows a week or, zoomed in, a day by hours.
  const [zoom, setZoom] = useState<Zoom>('week');
  const [start, setStart] = useState(() => rangeStart('week', new Date()));
  const bounds = useMemo(() => (zoom === 'week' ? dayBounds(start) : hourBounds(start)), [zoom, start]);
  const bookings = useBookings({ from: bounds[0], to: bounds[bounds.length - 1], deviceId: device?.id });
  // The "now" line moves on every minute.
  const now = useNow(60_000);
  const [slot, setSlot] = useState<SlotChoice | undefined>();
  const [selected, setSelected] = useState<Reservation | undefined>();
  const [notice, setNotice] = useState('');
  const [filter, setFilter] = useState('');
  const store = useLive();
  const mayBook = may(user, 'DeviceConnect');

  const devices = useMemo(() => [...store.devices.values()].filter((d) => !d.deleted)
    .map((d) => ({ id: d.id, name: d.name })).sort((a, b) => a.name.localeCompare(b.name)), [store.devicesVersion]);
  const shown = filter ? devices.filter((d) => d.name.toLowerCase().includes(filter.toLowerCase())) : devices;
  // The selected booking as the list has it now (moved or cancelled by someone else meanwhile).
  const current = selected && bookings.list?.find((b) => b.id === selected.id);

  const offer = (choice: SlotChoice) => {
    setSelected(undefined);
    setNotice('');
    setSlot(choice);
  };
  const choose = (booking: Reservation) => {
    setSlot(undefined);
    setNotice('');
    setSelected(booking);
  };
  const booked = (b: Reservation) => {
    bookings.put(b);
    setSlot(undefined);
    setNotice(`Booked ${b.deviceName}: ${rangeLabel(new Date(b.start), new Date(b.end))}${b.seriesId ? ', and the same time in the following weeks' : ''}.`);
  };
  const cancelled = (id: string, series: boolean) => {
    bookings.drop(id);
    setSelected(undefined);
    setNotice(series ? 'Booking and its later weeks cancelled.' : 'Booking cancelled.');
  };
  const newBooking = () => {
    const from = new Date(Math.ceil(Date.now() / HOUR_MS) * HOUR_MS);
    offer({ deviceId: device?.id ?? '', start: from, end: new Date(from.getTime() + HOUR_MS) });
  };

  return (
    <div class="calendar">
      <div class="calendar-bar">
        <RangeNav zoom={zoom} start={start} onChange={setStart} />
        {!device && (
          <div class="zoom" role="group" aria-label="Show">
            {(['week', 'day'] as const).map((z) => (
              <button type="button" key={z} aria-pressed={zoom === z} onClick={() => {
                // The day shown is today when it is in the week on screen, else the week's first day; back to its week.
                const today = new Date();
                setStart(z === 'week' ? rangeStart('week', start) : today >= bounds[0] && today < bounds[bounds.length - 1] ? rangeStart('day', today) : start);
                setZoom(z);
              }}>{z === 'week' ? 'Week' : 'Day'}</button>
            ))}
          </div>
        )}
        {!device && <label class="filter">Devices<input type="search" placeholder="Filter by name" value={filter}
          onInput={(e) => setFilter((e.target as HTMLInputElement).value)} /></label>}
        <span class="legend" aria-hidden="true"><i class="swatch mine" />Yours <i class="swatch" />Others'</span>
        {mayBook && <button type="button" class="primary" onClick={newBooking}>New booking…</button>}
      </div>
      {!mayBook && <p class="muted" data-testid="no-booking">You can see who has what when; booking a device needs the DeviceConnect entitlement.</p>}
      {mayBook && !slot && !current && <p class="hint">Choose a free time on the calendar to book it, or a booking to see it or cancel it.</p>}
      {notice && <p class="notice" role="status">{notice}</p>}
      {slot && <BookingForm slot={slot} devices={device ? undefined : devices} onBooked={booked} onClose={() => setSlot(undefined)} />}
      {current && <BookingDetails booking={current} user={user} onCancelled={cancelled} onClose={() => setSelected(undefined)} />}
      {bookings.error && <p class="error" role="alert">{bookings.error}</p>}
      {!bookings.list && !bookings.error && <p class="muted" aria-busy="true">Loading bookings…</p>}
      {device
        ? <DeviceWeek deviceId={device.id} deviceName={device.name} days={bounds} bookings={bookings.list ?? []} userId={user.id} now={now}
          onSlot={mayBook ? offer : undefined} onSelect={choose} selectedId={current?.id} />
        : <LabTimeline bounds={bounds} devices={shown} bookings={bookings.list ?? []} userId={user.id} now={now}
          onSlot={mayBook ? offer : undefined} onSelect={choose} selectedId={current?.id} />}
      {!device && shown.length === 0 && <p class="muted">{devices.length ? 'No device matches the filter.' : 'No devices yet.'}</p>}
    </div>
  );
}
