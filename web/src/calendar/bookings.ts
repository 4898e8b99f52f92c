/**
 * The bookings a calendar shows: read from GET /Reservation for the week on screen, kept current by the event
 * stream's `reservation` events (someone else's booking appears within a second), read again when the stream
 * may have missed some (a reset) and when the tab comes back into view.
 */
import { useEffect, useState } from 'preact/hooks';
import { call, getJson, query } from '../api/client';
import type { Reservation, Result, SessionUser } from '../api/types';
import { live } from '../live/store';
import { may } from '../session';
import { toWire } from './week';

export interface BookingWindow {
  from: Date;
  to: Date;
  /** Only this device's bookings (its Guid). */
  deviceId?: string;
}

const overlaps = (b: Reservation, w: BookingWindow) =>
  Date.parse(b.start) < w.to.getTime() && Date.parse(b.end) > w.from.getTime() && (!w.deviceId || b.deviceId === w.deviceId);

export interface Bookings {
  list: Reservation[] | undefined;
  error: string | undefined;
  /** Shows a booking just made or moved at once, before its event arrives. */
  put(booking: Reservation): void;
  /** Takes a cancelled booking off at once. */
  drop(id: string): void;
}

export function useBookings(span: BookingWindow): Bookings {
  const [list, setList] = useState<Reservation[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const key = `${span.from.getTime()}|${span.to.getTime()}|${span.deviceId ?? ''}`;
  useEffect(() => {
    let stopped = false;
    setList(undefined);
    const load = () => getJson<Result<Reservation[]>>(`/Reservation${query({ from: toWire(span.from), to: toWire(span.to), deviceId: span.deviceId })}`)
      .then((r) => { if (!stopped) { setList(r.data ?? []); setError(undefined); } }, (err: Error) => { if (!stopped) setError(err.message); });
    void load();
    const unsubscribe = live.onReservation((change) => {
      if (change.reload) return void load();
      setList((current) => {
        if (!current) return current;
        const rest = current.filter((b) => b.id !== change.id);
        return change.booking && overlaps(change.booking, span) ? sorted([...rest, change.booking]) : rest;
      });
    });
    const visible = () => document.visibilityState === 'visible' && void load();
    document.addEventListener('visibilitychange', visible);
    return () => {
      stopped = true;
      unsubscribe();
      document.removeEventListener('visibilitychange', visible);
    };
  }, [key]);
  return {
    list, error,
    put: (booking) => setList((current) => sorted([...(current ?? []).filter((b) => b.id !== booking.id), ...(overlaps(booking, span) ? [booking] : [])])),
    drop: (id) => setList((current) => current?.filter((b) => b.id !== id)),
  };
}

const sorted = (list: Reservation[]) => list.sort((a, b) => Date.parse(a.start) - Date.parse(b.start));

/**
 * Books `deviceId` for the signed-in user, `weeks` times a week apart (the hub books them all or none); the hub's
 * refusal (an overlap, a rule, an entitlement) is thrown in its words. Answers the first occurrence.
 */
export async function book(deviceId: string, start: Date, end: Date, note: string, weeks = 1): Promise<Reservation> {
  return (await call<Reservation>('POST', '/Reservation?add', undefined,
    { deviceId, start: toWire(start), end: toWire(end), note, ...(weeks > 1 ? { weeks } : {}) }))!;
}

/** Cancels a booking; with `series`, also the later occurrences of its weekly series. */
export async function cancelBooking(id: string, series = false): Promise<void> {
  await call('POST', `/Reservation${query({ action: 'delete', id, series: series || undefined })}`);
}

/** Whether this user may cancel the booking (the hub's rule: one's own, or anyone's with DeviceReleaseAny). */
export const mayCancel = (b: Reservation, user: SessionUser) =>
  may(user, 'DeviceConnect') && (b.reservedById === user.id || may(user, 'DeviceReleaseAny'));
