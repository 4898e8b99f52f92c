/**
 * SQL literals for values the hub produced itself: a device id read from the database, a timestamp it formatted,
 * a number it validated. The metrics statements travel in the simple protocol, together with their
 * `SET LOCAL statement_timeout`, to take one round trip; that protocol has no bound parameters. Request text never
 * gets here (identifiers come from the catalog, values from these functions), and anything that is not of these
 * strict shapes is refused rather than rendered.
 */
import { sql, type RawBuilder } from 'kysely';

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
