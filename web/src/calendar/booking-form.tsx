/** The form that books a slot: device (on the lab calendar), start, end and a note; a refusal shows the hub's words. */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Reservation } from '../api/types';
import { book } from './bookings';
import { fromLocalInput, rangeLabel, timeZoneName, toLocalInput } from './week';

export interface SlotChoice {
  deviceId: string;
  start: Date;
  end: Date;
}

/** What a calendar view shows and offers: the bookings drawn, one's own marked, a free slot to book, a booking to open. */
export interface BookingViewProps {
  bookings: Reservation[];
  userId: string;
  now: number;
  /** Absent for users who may not book. */
  onSlot?: (slot: SlotChoice) => void;
  onSelect(booking: Reservation): void;
  selectedId?: string;
}

interface Props {
  slot: SlotChoice;
  /** The devices to choose from; absent on a device's own calendar. */
  devices?: { id: string; name: string }[];
  onBooked(booking: Reservation): void;
  onClose(): void;
}

export function BookingForm({ slot, devices, onBooked, onClose }: Props) {
  const [deviceId, setDeviceId] = useState(slot.deviceId);
  const [start, setStart] = useState(toLocalInput(slot.start));
  const [end, setEnd] = useState(toLocalInput(slot.end));
  const [note, setNote] = useState('');
  const [weeks, setWeeks] = useState(1);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const first = useRef<HTMLSelectElement & HTMLInputElement>(null);
  useEffect(() => {
    setDeviceId(slot.deviceId);
    setStart(toLocalInput(slot.start));
    setEnd(toLocalInput(slot.end));
    setError('');
    first.current?.focus();
  }, [slot]);

  const from = fromLocalInput(start);
  const to = fromLocalInput(end);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!deviceId) return setError('Choose a device.');
    if (!from || !to) return setError('Give a start and an end.');
    setBusy(true);
    setError('');
    try {
      onBooked(await book(deviceId, from, to, note.trim(), weeks));
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="booking-form card" onSubmit={submit} aria-label="New booking"
      onKeyDown={(e) => e.key === 'Escape' && onClose()}>
      <h3>New booking</h3>
      <div class="inline">
        {devices && (
          <label>Device
            <select ref={first} name="device" value={deviceId} onChange={(e) => setDeviceId((e.target as HTMLSelectElement).value)}>
              <option value="">Choose…</option>
              {devices.map((d) => <option key={d.id} value={d.id}>{d.name}</option>)}
            </select>
          </label>
        )}
        <label>Start<input ref={devices ? undefined : first} type="datetime-local" name="start" required value={start}
          onInput={(e) => setStart((e.target as HTMLInputElement).value)} /></label>
        <label>End<input type="datetime-local" name="end" required value={end}
          onInput={(e) => setEnd((e.target as HTMLInputElement).value)} /></label>
        <label>Repeat
          <select name="weeks" value={weeks} onChange={(e) => setWeeks(Number((e.target as HTMLSelectElement).value))}>
            <option value={1}>Once</option>
            {Array.from({ length: 11 }, (_, i) => i + 2).map((n) => <option key={n} value={n}>Weekly, {n} times</option>)}
          </select>
        </label>
        <label class="grow">Note<input name="note" maxLength={1000} value={note} placeholder="What for (optional)"
          onInput={(e) => setNote((e.target as HTMLInputElement).value)} /></label>
      </div>
      <p class="hint">{from && to && to > from ? rangeLabel(from, to) : 'The end must come after the start.'} · times in {timeZoneName()}</p>
      {error && <p class="error" role="alert" data-testid="booking-error">{error}</p>}
      <div class="buttons">
        <button type="submit" class="primary" disabled={busy}>{busy ? 'Booking…' : 'Book'}</button>
        <button type="button" onClick={onClose}>Close</button>
      </div>
    </form>
  );
}
