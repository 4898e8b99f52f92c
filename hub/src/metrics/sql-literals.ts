/**
 * SQL literals for values the hub produced itself: a device id read from the database, a timestamp it formatted,
 * a number it validated. The metrics statements travel in the simple protocol, together with their
 * `SET LOCAL statement_timeout`, to take one round trip; that protocol has no bound parameters. Identifiers come
 * from the catalog, values from these functions, and anything that is not of these strict shapes is refused rather
 * than rendered. Request text (the device identifier and marker name of the one-message device lookup) enters
 * only as the hex digits of its UTF-8 bytes (`hexTextLiteral`): no character of it can reach the SQL text.
 */
import { sql, type RawBuilder } from 'kysely';
import type { TextRendering } from '../domain/device-queries';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** `toISOString()` of years 1 to 275760 (JavaScript's last): `+` and six digits past 9999. */
const ISO_TIME = /^(?:\d{4}|\+\d{6})-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function uuidLiteral(id: string): RawBuilder<unknown> {
  if (typeof id !== 'string' || !UUID.test(id)) throw new Error(`not a uuid: ${JSON.stringify(id)}`);
  return sql`${sql.lit(id)}::uuid`;
}

/**
 * A time PostgreSQL holds (years 1 to 275760 here). PostgreSQL has no year 0 and reads `+010000-...` as a time
 * zone, so years before 1 are refused and years past 9999 are written with their plain five or six digits.
 */
export function timestampLiteral(at: Date): RawBuilder<unknown> {
  const text = at.toISOString(); // throws for an invalid Date
  if (!ISO_TIME.test(text) || text.startsWith('0000-')) throw new Error(`not a timestamp: ${JSON.stringify(text)}`);
  return sql`${sql.lit(text.replace(/^\+0?/, ''))}::timestamptz`;
}

export function float8Literal(value: number): RawBuilder<unknown> {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new Error(`not a finite number: ${String(value)}`);
  return sql`${sql.lit(value)}::float8`;
}

/** A count (LIMIT, OFFSET, a timeout in ms): a non-negative safe integer. */
export function countLiteral(value: number): RawBuilder<unknown> {
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`not a count: ${String(value)}`);
  return sql.lit(value);
}

/** Request text as `convert_from(decode('<hex of its UTF-8>', 'hex'), 'UTF8')`: hex digits are all the SQL text gets. */
export function hexTextLiteral(text: string): RawBuilder<string> {
  // PostgreSQL's text cannot hold NUL (a bound parameter with one fails too); callers take the bound path for it.
  if (typeof text !== 'string' || text.includes('\0')) throw new Error('text with NUL cannot be rendered');
  return sql<string>`convert_from(decode(${sql.lit(Buffer.from(text, 'utf8').toString('hex'))}, 'hex'), 'UTF8')`;
}

/** identifierMatch's values rendered into the statement text, for the one-message batch. */
export const LITERAL_TEXT: TextRendering = {
  text: hexTextLiteral,
  uuid: (value) => uuidLiteral(value) as RawBuilder<string>,
};
