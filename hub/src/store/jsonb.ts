/** Writing jsonb columns. */
import { sql, type RawBuilder } from 'kysely';

/**
 * A value serialised to a jsonb parameter. Typed `any` because schema.ts declares the jsonb columns as
 * `Generated<Json<T>>`, and kysely does not unwrap a ColumnType nested in Generated, so it expects the
 * select type on insert/update; an explicit `::jsonb` cast is correct for either typing.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function jsonb(value: unknown): RawBuilder<any> {
  return sql`${JSON.stringify(value)}::jsonb`;
}
