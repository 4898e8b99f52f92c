/**
 * Reservations (extension /Reservation): bookings of a device for a time range. The database refuses two
 * bookings of one device that overlap (an exclusion constraint, migration 030), so two hub replicas can never
 * both accept; during a booking only its booker may retain the device (`retain_refusal`). Who booked what when
 * is not secret in a lab: anyone who may list devices sees every booking. Booking needs DeviceConnect (whoever
 * may retain may book); changing or cancelling someone else's booking needs DeviceReleaseAny. A weekly series (the
 * same time every week, up to 12 times) is written in one statement: every occurrence is booked, or none.
 */
import { randomUUID } from 'node:crypto';
import { ApiFailure, formatWireDate } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { hasEntitlement, requireEntitlement } from '../auth/entitlements';
import { isExclusionViolation, type Db } from '../store/database';
import { readDeferred, type Deferred } from './deferred-input';
import { deviceNotFound, identifierMatch, resolveDeviceIdentity } from './device-queries';
import { USER_DISPLAY_NAME } from './devices';

/** The most occurrences of a weekly series. */
export const MAX_SERIES_WEEKS = 12;
const WEEK_MS = 7 * 86_400_000;
/** The longest booking. */
export const MAX_RESERVATION_DAYS = 7;
/** How far ahead a booking may start. */
export const MAX_RESERVATION_LEAD_DAYS = 90;
/** Bookings not yet ended one user may hold, so no client can fill the calendar. */
export const MAX_OPEN_RESERVATIONS_PER_USER = 100;
/** A start this far in the past is taken as "now" (a booking from now, sent with the client's clock). */
const START_SLACK_MS = 60_000;
/** The most bookings one list answers. */
const MAX_LISTED = 1000;
const DAY_MS = 86_400_000;

/** A booking as the API shows it. */
export interface Reservation {
  id: string;
  deviceId: string;
  deviceName: string;
  reservedById: string;
  reservedByDisplayName: string;
  start: string;
  end: string;
  note: string;
  createdAt: string;
  createdById?: string;
  /** Shared by the occurrences of a weekly series; absent for a single booking. */
  seriesId?: string;
}

/** What a create or change request sets; absent = unchanged (a create needs deviceId, start and end). */
export interface ReservationChanges {
  deviceId?: string;
  start?: Date;
  end?: Date;
  note?: string;
  /** On create: the same time every week, this many times (1 to MAX_SERIES_WEEKS; default 1). */
  weeks?: number;
}

export interface ReservationQuery {
  /** The device's Guid, serial number or vendor unique identifier. */
  deviceId?: string;
  /** Bookings that end after this (default: now). */
  from?: Date;
  /** Bookings that start before this. */
  to?: Date;
}

interface Clock { now?: () => Date }

/** The refusal of a use of the device during someone else's booking. */
export function reservedBy(deviceName: string, booking: { booker_login: string | null; booking_ends_at: Date | null }): string {
  const until = booking.booking_ends_at ? ` until ${formatWireDate(booking.booking_ends_at)}` : '';
  return `Device '${deviceName}' is reserved by '${booking.booker_login ?? 'another user'}'${until}.`;
}

export async function listReservations(
  db: Db, user: AuthenticatedUser, query: Deferred<ReservationQuery>, clock: Clock = {},
): Promise<Reservation[]> {
  requireEntitlement(user, 'DeviceList');
  const { deviceId, from, to } = readDeferred(query);
  let q = selectReservations(db).where('reservations.ends_at', '>', from ?? clock.now?.() ?? new Date());
  if (to) q = q.where('reservations.starts_at', '<', to);
  // A device that does not exist is a failure, as for every other filter naming one (not an empty list).
  if (deviceId !== undefined) q = q.where('reservations.device_id', '=', (await resolveDeviceIdentity(db, deviceId)).id);
  const rows = await q.orderBy('reservations.starts_at').orderBy('reservations.id').limit(MAX_LISTED).execute();
  return rows.map(toReservation);
}

/** Books a device for the caller. */
export async function createReservation(
  db: Db, user: AuthenticatedUser, input: Deferred<ReservationChanges>, clock: Clock = {},
): Promise<Reservation> {
  requireEntitlement(user, 'DeviceConnect');
  const { deviceId, start, end, note, weeks = 1 } = readDeferred(input);
  if (!deviceId) throw new ApiFailure("Property 'deviceId' is required.");
  if (!start || !end) throw new ApiFailure("Properties 'start' and 'end' are required.");
  if (!Number.isInteger(weeks) || weeks < 1 || weeks > MAX_SERIES_WEEKS) {
    throw new ApiFailure(`Property 'weeks' must be a whole number from 1 to ${MAX_SERIES_WEEKS}.`);
  }
  const now = clock.now?.() ?? new Date();
  // Every week is 7 x 24 hours later: across a daylight-saving change the booker's local hour moves by one.
  const ranges = Array.from({ length: weeks }, (_, i) =>
    checkedRange(new Date(start.getTime() + i * WEEK_MS), new Date(end.getTime() + i * WEEK_MS), now, true));
  const device = await bookableDevice(db, deviceId);
  const { open } = await db.selectFrom('reservations').select((eb) => eb.fn.countAll<number>().as('open'))
    .where('user_id', '=', user.id).where('ends_at', '>', now).executeTakeFirstOrThrow();
  if (Number(open) + weeks > MAX_OPEN_RESERVATIONS_PER_USER) {
    throw new ApiFailure(`You may hold at most ${MAX_OPEN_RESERVATIONS_PER_USER} bookings (${Number(open)} now): cancel some first.`);
  }
  const seriesId = weeks > 1 ? randomUUID() : null;
  // One statement: the exclusion constraint refuses it whole if any occurrence overlaps a booking.
  const rows = await refusingOverlap(db, device, ranges, () => db.insertInto('reservations').values(ranges.map((range) => ({
    device_id: device.id, user_id: user.id, starts_at: range.start, ends_at: range.end, note: note ?? '',
    created_by: user.id, series_id: seriesId,
  }))).returning(['id', 'starts_at']).execute());
  const [first] = rows.sort((a, b) => a.starts_at.getTime() - b.starts_at.getTime());
  return readReservation(db, first.id);
}

/** Moves a booking in time or changes its note: the booker's own, or anyone's with DeviceReleaseAny. */
export async function updateReservation(
  db: Db, user: AuthenticatedUser, reservationId: Deferred<string>, changes: Deferred<ReservationChanges>, clock: Clock = {},
): Promise<Reservation> {
  requireEntitlement(user, 'DeviceConnect');
  const id = readDeferred(reservationId);
  const change = readDeferred(changes);
  if (change.deviceId !== undefined) throw new ApiFailure("A booking's device cannot change: cancel it and book the other device.");
  if (change.weeks !== undefined) throw new ApiFailure("Property 'weeks' is only for a new booking: each occurrence of a series moves on its own.");
  const current = await ownReservation(db, user, id);
  const now = clock.now?.() ?? new Date();
  const range = checkedRange(change.start ?? current.starts_at, change.end ?? current.ends_at, now, change.start !== undefined);
  await refusingOverlap(db, { id: current.device_id, name: current.device_name }, [range], () => db.updateTable('reservations')
    .set({ starts_at: range.start, ends_at: range.end, ...(change.note !== undefined ? { note: change.note } : {}) })
    .where('id', '=', id).execute(), id);
  return readReservation(db, id);
}

/**
 * Cancels a booking: the booker's own, or anyone's with DeviceReleaseAny; with `series`, also the later
 * occurrences of its weekly series. What has happened stays: a booking that has started ends now (the usage during
 * it still names its booker), one that has ended cannot be cancelled.
 */
export async function deleteReservation(
  db: Db, user: AuthenticatedUser, reservationId: Deferred<string>, series: Deferred<boolean> = () => false,
  clock: Clock = {},
): Promise<void> {
  requireEntitlement(user, 'DeviceConnect');
  const id = readDeferred(reservationId);
  const andLater = readDeferred(series);
  const current = await ownReservation(db, user, id);
  const now = new Date(Math.floor((clock.now?.() ?? new Date()).getTime() / 1000) * 1000);
  if (current.ends_at <= now) {
    throw new ApiFailure(`Reservation '${id}' ended at ${formatWireDate(current.ends_at)}: a past booking is history and cannot be cancelled.`);
  }
  await db.transaction().execute(async (trx) => {
    if (andLater && current.series_id) {
      await trx.deleteFrom('reservations').where('series_id', '=', current.series_id)
        .where('starts_at', '>', current.starts_at).execute();
    }
    if (current.starts_at < now) {
      await trx.updateTable('reservations').set({ ends_at: now }).where('id', '=', id).where('starts_at', '<', now).execute();
    } else {
      await trx.deleteFrom('reservations').where('id', '=', id).execute();
    }
  });
}

function selectReservations(db: Db) {
  return db.selectFrom('reservations')
    .innerJoin('devices', 'devices.id', 'reservations.device_id')
    .innerJoin('users', 'users.id', 'reservations.user_id')
    .select(['reservations.id', 'reservations.device_id', 'devices.name as device_name', 'reservations.user_id',
      'users.login', 'reservations.starts_at', 'reservations.ends_at', 'reservations.note', 'reservations.created_at',
      'reservations.created_by', 'reservations.series_id',
      USER_DISPLAY_NAME.as('display_name')]);
}

type ReservationRow = Awaited<ReturnType<ReturnType<typeof selectReservations>['executeTakeFirstOrThrow']>>;

function toReservation(row: ReservationRow): Reservation {
  return {
    id: row.id, deviceId: row.device_id, deviceName: row.device_name, reservedById: row.user_id,
    reservedByDisplayName: row.display_name, start: formatWireDate(row.starts_at), end: formatWireDate(row.ends_at),
    note: row.note, createdAt: formatWireDate(row.created_at), createdById: row.created_by ?? undefined,
    seriesId: row.series_id ?? undefined,
  };
}

/** One booking as the API shows it; undefined once cancelled (the event stream's `reservation` object). */
export async function findReservation(db: Db, id: string): Promise<Reservation | undefined> {
  const row = await selectReservations(db).where('reservations.id', '=', id).executeTakeFirst();
  return row && toReservation(row);
}

async function readReservation(db: Db, id: string): Promise<Reservation> {
  return toReservation(await selectReservations(db).where('reservations.id', '=', id).executeTakeFirstOrThrow());
}

/** The booking, if the caller may change it. */
async function ownReservation(db: Db, user: AuthenticatedUser, id: string): Promise<ReservationRow> {
  const row = await selectReservations(db).where('reservations.id', '=', id).executeTakeFirst();
  if (!row) throw new ApiFailure(`Reservation '${id}' not found.`);
  if (row.user_id !== user.id && !hasEntitlement(user, 'DeviceReleaseAny')) {
    throw new ApiFailure(`Reservation '${id}' is ${row.login}'s: changing another user's booking requires the DeviceReleaseAny entitlement.`, 'ENTITLEMENT_REQUIRED');
  }
  return row;
}

/** Whole seconds (as the device record shows them), ending after they start, within the length and lead limits. */
function checkedRange(start: Date, end: Date, now: Date, startIsNew: boolean): { start: Date; end: Date } {
  const second = (d: Date) => new Date(Math.floor(d.getTime() / 1000) * 1000);
  let from = second(start);
  const to = second(end);
  if (startIsNew && from.getTime() < now.getTime() - START_SLACK_MS) throw new ApiFailure('A booking cannot start in the past.');
  if (startIsNew && from < now) from = second(now);
  if (to <= from) throw new ApiFailure('A booking must end after it starts.');
  if (to <= now) throw new ApiFailure('A booking must end in the future.');
  if (to.getTime() - from.getTime() > MAX_RESERVATION_DAYS * DAY_MS) {
    throw new ApiFailure(`A booking lasts at most ${MAX_RESERVATION_DAYS} days.`);
  }
  if (from.getTime() - now.getTime() > MAX_RESERVATION_LEAD_DAYS * DAY_MS) {
    throw new ApiFailure(`A booking starts at most ${MAX_RESERVATION_LEAD_DAYS} days ahead.`);
  }
  return { start: from, end: to };
}

async function bookableDevice(db: Db, identifier: string): Promise<{ id: string; name: string }> {
  const match = identifierMatch(identifier);
  const device = await db.selectFrom('devices').select(['devices.id', 'devices.name', 'devices.deleted'])
    .where(match.where).orderBy(match.preference).limit(1).executeTakeFirst();
  if (!device) throw new ApiFailure(deviceNotFound(match.text), 'DEVICE_NOT_FOUND');
  if (device.deleted) throw new ApiFailure(`Device '${device.name}' is deleted.`, 'DEVICE_UNAVAILABLE');
  return device;
}

/**
 * Runs the write; a booking it would overlap (the database's exclusion constraint) is named in the failure, the
 * first one in the way of any of the ranges (the occurrences of a series).
 */
async function refusingOverlap<T>(
  db: Db, device: { id: string; name: string }, ranges: { start: Date; end: Date }[], write: () => Promise<T>, exceptId?: string,
): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (!isExclusionViolation(err)) throw err;
    let q = selectReservations(db).where('reservations.device_id', '=', device.id)
      .where((eb) => eb.or(ranges.map((range) => eb.and([eb('reservations.starts_at', '<', range.end), eb('reservations.ends_at', '>', range.start)]))));
    if (exceptId) q = q.where('reservations.id', '<>', exceptId);
    // Cancelled since the constraint saw it: the refusal stands, without a name.
    const booking = await q.orderBy('reservations.starts_at').executeTakeFirst();
    if (!booking) throw new ApiFailure(`Device '${device.name}' is already reserved at that time.`, 'DEVICE_RESERVED');
    throw new ApiFailure(`Device '${device.name}' is already reserved from ${formatWireDate(booking.starts_at)} to `
      + `${formatWireDate(booking.ends_at)} by '${booking.display_name}'.`, 'DEVICE_RESERVED');
  }
}
