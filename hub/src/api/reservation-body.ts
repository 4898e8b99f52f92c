/**
 * The JSON body of `POST /Reservation?add` and `?action=update` (`{"deviceId":..,"start":..,"end":..,"note":..}`;
 * on add also `"weeks":N`, the same time every week, N times).
 */
import { ApiFailure, isWithinRequestDateRange, parseRequestDate } from '@devicelab/shared';
import type { BodyReader, JsonBody } from '../http/json-body';
import type { ReservationChanges } from '../domain/reservations';

const KEYS = ['deviceid', 'start', 'end', 'note', 'weeks'];
/** A note is a line or two for the calendar, not a document. */
const MAX_NOTE_CHARS = 1000;

/** Read when the domain asks (after the entitlement is checked); absent keys stay undefined. */
export function reservationChanges(readBody: BodyReader): () => ReservationChanges {
  return () => {
    const body = readBody();
    const unknown = body.keys().find((key) => !KEYS.includes(key));
    if (unknown !== undefined) throw new ApiFailure(`Property '${unknown}' is not part of a reservation: send deviceId, start, end and note.`);
    const note = body.string('note') ?? undefined;
    if (note !== undefined && note.length > MAX_NOTE_CHARS) throw new ApiFailure(`Property 'note' is longer than ${MAX_NOTE_CHARS} characters.`);
    const weeks = body.int('weeks') ?? undefined;
    return { deviceId: body.string('deviceId')?.trim() || undefined, start: date(body, 'start'), end: date(body, 'end'), note, weeks };
  };
}

function date(body: JsonBody, name: string): Date | undefined {
  const text = body.string(name);
  if (text === undefined || text === null || text.trim() === '') return undefined;
  const parsed = parseRequestDate(text);
  if (!parsed || !isWithinRequestDateRange(parsed.date)) throw new ApiFailure(`Property '${name}' is not a valid date: '${text}'.`);
  return parsed.date;
}
