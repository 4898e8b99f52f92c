/**
 * A validated MetricsQuery as PostgreSQL: one parameterised statement per (period, table), all in one
 * transaction whose `statement_timeout` is the query's timeout. Identifiers come only from the catalog and
 * the table allow-list; every value is a bound parameter.
 */
import { sql, type RawBuilder } from 'kysely';
import { sqlStateOf, withTx, type Db, type Tx } from '../store/database';
import { safeColumn } from './field-catalog';
import { formatMetricTime } from './metric-time';
import {
  MetricsQueryTimeout, type Aggregate, type MetricsQuery, type MetricsSeries, type QueryPeriod, type SelectedField,
  type TableQuery,
} from './metrics-store';

const QUERY_CANCELED = '57014';

type Row = Record<string, unknown>;

export async function runPostgresQuery(db: Db, query: MetricsQuery): Promise<MetricsSeries[]> {
  try {
    return await withTx(db, async (trx) => {
      await sql`SELECT set_config('statement_timeout', ${String(query.timeoutMs)}, true)`.execute(trx);
      const series: MetricsSeries[] = [];
      for (const period of query.periods) {
        for (const table of query.tables) series.push(...(await runOne(trx, query, table, period)));
      }
      return series;
    });
  } catch (err) {
    if (sqlStateOf(err) === QUERY_CANCELED) throw new MetricsQueryTimeout(query.timeoutMs);
    throw err;
  }
}

async function runOne(trx: Tx, query: MetricsQuery, table: TableQuery, period: QueryPeriod): Promise<MetricsSeries[]> {
  const where = whereClause(query.deviceId, period);
  const from = sql.id('metrics', table.table);
  const group = table.groupBy ? sql`${fieldExpression(table.groupBy)}::text` : undefined;
  if (query.aggregates.length > 0) {
    const { rows } = await sql<Row>`
      SELECT ${group ? sql`${group} AS grp,` : sql``}
        (extract(epoch FROM min(time)) * 1000000)::int8 AS first_time,
        ${sql.join(aggregateColumns(query.aggregates, table.fields))}
      FROM ${from} WHERE ${where}
      ${group ? sql`GROUP BY 1 ORDER BY 1 NULLS FIRST` : sql``}`.execute(trx);
    return rows
      .filter((row) => row.first_time !== null)
      .map((row) => {
        const time = period.start ? period.start.getTime() * 1000 : Number(row.first_time);
        const values = [[formatMetricTime(time), ...valuesOf(row, query.aggregates.length * table.fields.length)]];
        return series(table, period, row, pageOf(values, query), aggregateTitles(query.aggregates, table.fields));
      })
      .filter((found) => found.values.length > 0);
  }

  const select = sql.join([
    sql`(extract(epoch FROM time) * 1000000)::int8 AS t`,
    ...table.fields.map((field, i) => sql`${fieldExpression(field)} AS ${sql.id(`v${i}`)}`),
  ]);
  const direction = query.descending ? sql`DESC` : sql`ASC`;
  let statement: RawBuilder<Row>;
  if (!group) {
    statement = sql<Row>`SELECT ${select} FROM ${from} WHERE ${where} ORDER BY time ${direction}
      ${query.limit !== undefined ? sql`LIMIT ${query.limit}` : sql``}
      ${query.offset ? sql`OFFSET ${query.offset}` : sql``}`;
  } else if (query.limit === undefined) {
    statement = sql<Row>`SELECT ${group} AS grp, ${select} FROM ${from} WHERE ${where}
      ORDER BY 1 NULLS FIRST, time ${direction}`;
  } else {
    // InfluxQL's LIMIT/OFFSET count points per series: number the rows of each group.
    const offset = query.offset ?? 0;
    statement = sql<Row>`SELECT * FROM (
        SELECT ${group} AS grp, ${select}, row_number() OVER (PARTITION BY ${group} ORDER BY time ${direction}) AS rn
        FROM ${from} WHERE ${where}) numbered
      WHERE rn > ${offset} AND rn <= ${offset + query.limit} ORDER BY grp NULLS FIRST, rn`;
  }
  const { rows } = await statement.execute(trx);
  const columns = ['time', ...table.fields.map((f) => f.name)];
  if (!group) {
    if (rows.length === 0) return [];
    return [series(table, period, undefined, rows.map((row) => rawValues(row, table.fields.length)), columns)];
  }
  const groups = new Map<string | null, Row[]>();
  for (const row of rows) {
    const key = row.grp as string | null;
    let list = groups.get(key);
    if (!list) groups.set(key, (list = []));
    list.push(row);
  }
  return [...groups.values()].map((list) =>
    series(table, period, list[0], list.map((row) => rawValues(row, table.fields.length)), columns));
}

function whereClause(deviceId: string, period: QueryPeriod): RawBuilder<unknown> {
  const conditions = [sql`device_id = ${deviceId}::uuid`];
  if (period.start) conditions.push(sql`time >= ${period.start.toISOString()}::timestamptz`);
  if (period.end) conditions.push(sql`time <= ${period.end.toISOString()}::timestamptz`);
  return sql.join(conditions, sql` AND `);
}

function fieldExpression(field: SelectedField): RawBuilder<unknown> {
  if (field.source === undefined) return sql`NULL`;
  if (field.source === 'device_id') return sql`device_id`;
  return sql.id(safeColumn(field.source.column));
}

/** Columns ordered by function, then by field (spec 4.3). */
function aggregateColumns(aggregates: Aggregate[], fields: SelectedField[]): RawBuilder<unknown>[] {
  const columns: RawBuilder<unknown>[] = [];
  for (const aggregate of aggregates) {
    for (const field of fields) {
      columns.push(sql`${aggregateExpression(aggregate, fieldExpression(field))} AS ${sql.id(`a${columns.length}`)}`);
    }
  }
  return columns;
}

function aggregateExpression(aggregate: Aggregate, c: RawBuilder<unknown>): RawBuilder<unknown> {
  switch (aggregate.name) {
    case 'count': return sql`count(${c})::float8`;
    case 'sum': return sql`sum(${c})`;
    case 'mean': return sql`avg(${c})`;
    case 'median': return sql`percentile_cont(0.5) WITHIN GROUP (ORDER BY ${c})`;
    case 'mode': return sql`mode() WITHIN GROUP (ORDER BY ${c})`;
    case 'spread': return sql`max(${c}) - min(${c})`;
    case 'stddev': return sql`stddev_samp(${c})`;
    case 'min': return sql`min(${c})`;
    case 'max': return sql`max(${c})`;
    case 'first': return sql`(array_agg(${c} ORDER BY time ASC) FILTER (WHERE ${c} IS NOT NULL))[1]`;
    case 'last': return sql`(array_agg(${c} ORDER BY time DESC) FILTER (WHERE ${c} IS NOT NULL))[1]`;
    case 'percentile':
      // Nearest rank, as InfluxQL's percentile().
      return sql`percentile_disc(${(aggregate.percentile ?? 50) / 100}::float8) WITHIN GROUP (ORDER BY ${c})`;
  }
}

export function aggregateTitles(aggregates: Aggregate[], fields: SelectedField[]): string[] {
  return ['time', ...aggregates.flatMap((a) => fields.map((f) => `${a.label}_${f.name}`))];
}

function valuesOf(row: Row, count: number): (string | number | boolean | null)[] {
  const out: (string | number | boolean | null)[] = [];
  for (let i = 0; i < count; i++) out.push(cell(row[`a${i}`]));
  return out;
}

function rawValues(row: Row, count: number): (string | number | boolean | null)[] {
  const out: (string | number | boolean | null)[] = [formatMetricTime(Number(row.t))];
  for (let i = 0; i < count; i++) out.push(cell(row[`v${i}`]));
  return out;
}

function cell(value: unknown): string | number | boolean | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'string') return value;
  return String(value);
}

function pageOf<T>(values: T[], query: MetricsQuery): T[] {
  const offset = query.offset ?? 0;
  return values.slice(offset, query.limit === undefined ? undefined : offset + query.limit);
}

function series(table: TableQuery, period: QueryPeriod, row: Row | undefined, values: MetricsSeries['values'],
  columns: string[]): MetricsSeries {
  const tags: Record<string, string> = { ...(period.tags ?? {}) };
  if (table.groupBy) tags[table.groupBy.name] = (row?.grp as string | null) ?? '';
  return { name: table.table, ...(Object.keys(tags).length > 0 ? { tags } : {}), columns, values };
}
