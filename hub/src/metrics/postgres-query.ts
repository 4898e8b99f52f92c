/**
 * A validated MetricsQuery as PostgreSQL: one statement per (period, table), all sent as one simple-protocol
 * message after `SET LOCAL statement_timeout`, so the database enforces the query's timeout on each of them at the
 * cost of a single round trip (they share one implicit transaction); a query by device identifier puts the device
 * (and marker) lookup first in the same message. Identifiers come only from the catalog and the table allow-list;
 * values only from sql-literals.ts.
 */
import { sql, type RawBuilder } from 'kysely';
import { runStatementBatch, sqlStateOf, type Db } from '../store/database';
import { safeColumn } from './field-catalog';
import { formatMetricTime } from './metric-time';
import { deviceLookupStatement, LOOKUP_SETTINGS, markerQueryPeriod, type LookupRow } from './markers';
import {
  MetricsQueryTimeout, MetricsResultTooLarge, type Aggregate, type DeviceLookup, type FieldKind, type LookedUpQuery, type LookedUpSeries,
  type MetricsQuery, type MetricsSeries, type QueryPeriod, type SelectedField, type TableQuery,
} from './metrics-store';
import { countLiteral, float8Literal, timestampLiteral, uuidLiteral } from './sql-literals';

const QUERY_CANCELED = '57014';

type Row = Record<string, unknown>;

/** One statement and how its rows become series (of the period it turned out to cover). */
interface PlannedStatement {
  statement: RawBuilder<Row>;
  read(rows: Row[], period: QueryPeriod): MetricsSeries[];
}

/** Which rows a statement reads: the device and the period's bounds, as SQL expressions. */
interface StatementTarget {
  device: RawBuilder<unknown>;
  start?: RawBuilder<unknown>;
  end?: RawBuilder<unknown>;
}

const literalTarget = (deviceId: string, period: QueryPeriod): StatementTarget => ({
  device: uuidLiteral(deviceId),
  start: period.start && timestampLiteral(period.start),
  end: period.end && timestampLiteral(period.end),
});

/** What the lookup statement of a one-message batch set (markers.ts deviceLookupStatement). */
const setting = (name: string, type: string) => sql`nullif(current_setting(${sql.lit(name)}, true), '')::${sql.raw(type)}`;

/**
 * `maxRows` bounds the answer's memory: each statement reads at most its even share of it, plus one row that
 * tells it went over (then the query fails with MetricsResultTooLarge rather than answer a truncated series).
 */
export async function runPostgresQuery(db: Db, query: MetricsQuery, maxRows: number): Promise<MetricsSeries[]> {
  const rowCap = rowsPerStatement(maxRows, query.periods.length * query.tables.length);
  const planned: { statement: PlannedStatement; period: QueryPeriod }[] = [];
  for (const period of query.periods) {
    for (const table of query.tables) {
      planned.push({ statement: plannedStatement(query, table, literalTarget(query.deviceId, period), rowCap + 1), period });
    }
  }
  const results = await runBatch(db, query.timeoutMs, planned.map((p) => p.statement.statement));
  checkCap(results, rowCap, maxRows, planned.length);
  return planned.flatMap((p, i) => p.statement.read(results[i].rows as Row[], p.period));
}

/**
 * The query of a device named by request text, and with a marker its period: the lookup is the first statement
 * of the same message (deviceLookupStatement), which hands the device and period to the data statements through
 * transaction-local settings. One round trip in all.
 */
export async function runLookedUpQuery(db: Db, lookup: DeviceLookup, query: LookedUpQuery, maxRows: number): Promise<LookedUpSeries> {
  const rowCap = rowsPerStatement(maxRows, query.tables.length);
  const target: StatementTarget = lookup.marker
    ? { device: setting(LOOKUP_SETTINGS.device, 'uuid'), start: setting(LOOKUP_SETTINGS.start, 'timestamptz'), end: setting(LOOKUP_SETTINGS.end, 'timestamptz') }
    : { ...literalTargetBounds(query.period), device: setting(LOOKUP_SETTINGS.device, 'uuid') };
  const planned = query.tables.map((table) => plannedStatement(query, table, target, rowCap + 1));
  const [found, ...results] = await runBatch(db, query.timeoutMs,
    [deviceLookupStatement(lookup.identifier, lookup.marker, lookup.now) as unknown as RawBuilder<Row>, ...planned.map((p) => p.statement)]);
  const row = found.rows[0] as unknown as LookupRow | undefined;
  if (!row) return { series: [] };
  const device = { id: row.id, name: row.name };
  let period = query.period;
  if (lookup.marker) {
    if (!row.started_at) return { device, series: [] };
    period = markerQueryPeriod({ name: lookup.marker.name, startedAt: row.started_at, stoppedAt: row.stopped_at ?? undefined }, lookup.now);
  }
  checkCap(results, rowCap, maxRows, planned.length);
  return { device, period, series: planned.flatMap((p, i) => p.read(results[i].rows as Row[], period)) };
}

const literalTargetBounds = (period: QueryPeriod) => ({
  start: period.start && timestampLiteral(period.start),
  end: period.end && timestampLiteral(period.end),
});

function rowsPerStatement(maxRows: number, statements: number): number {
  return Math.max(1, Math.floor(maxRows / statements));
}

function checkCap(results: { rows: unknown[] }[], rowCap: number, maxRows: number, statements: number): void {
  if (results.some((result) => result.rows.length > rowCap)) throw new MetricsResultTooLarge(maxRows, statements);
}

/** The statements after `SET LOCAL statement_timeout`, as one simple-protocol message; their results in order. */
async function runBatch(db: Db, timeoutMs: number, statements: RawBuilder<Row>[]): Promise<{ rows: unknown[] }[]> {
  // 0 would mean no timeout at all.
  if (!(timeoutMs >= 1)) throw new Error(`metrics query timeout must be positive: ${timeoutMs}`);
  const texts = [sql`SET LOCAL statement_timeout = ${countLiteral(timeoutMs)}`, ...statements].map((statement) => {
    const compiled = statement.compile(db);
    // The simple protocol cannot carry parameters: every value must have been rendered as a literal.
    if (compiled.parameters.length > 0) throw new Error('a metrics statement has a bound parameter');
    return compiled.sql;
  });
  try {
    return (await runStatementBatch(db, texts.join(';\n'))).slice(1);
  } catch (err) {
    if (sqlStateOf(err) === QUERY_CANCELED) throw new MetricsQueryTimeout(timeoutMs);
    throw err;
  }
}

function plannedStatement(query: LookedUpQuery | MetricsQuery, table: TableQuery, target: StatementTarget, rowCap: number): PlannedStatement {
  const cap = sql`LIMIT ${countLiteral(rowCap)}`;
  const where = whereClause(target);
  const from = sql.id('metrics', table.table);
  const group = table.groupBy ? sql`${fieldExpression(table.groupBy)}::text` : undefined;
  if (query.aggregates.length > 0) {
    return {
      statement: sql<Row>`
        SELECT ${group ? sql`${group} AS grp,` : sql``}
          (extract(epoch FROM min(time)) * 1000000)::int8 AS first_time,
          ${sql.join(aggregateColumns(query.aggregates, table.fields))}
        FROM ${from} WHERE ${where}
        ${group ? sql`GROUP BY 1 ORDER BY 1 NULLS FIRST` : sql``} ${cap}`,
      read: (rows, period) => rows
        .filter((row) => row.first_time !== null)
        .map((row) => {
          const time = period.start ? period.start.getTime() * 1000 : Number(row.first_time);
          const values = [[formatMetricTime(time), ...valuesOf(row, query.aggregates.length * table.fields.length)]];
          return series(table, period, row, pageOf(values, query), aggregateTitles(query.aggregates, table.fields));
        })
        .filter((found) => found.values.length > 0),
    };
  }

  const select = sql.join([
    sql`(extract(epoch FROM time) * 1000000)::int8 AS t`,
    ...table.fields.map((field, i) => sql`${fieldExpression(field)} AS ${sql.id(`v${i}`)}`),
  ]);
  const direction = query.descending ? sql`DESC` : sql`ASC`;
  let statement: RawBuilder<Row>;
  if (!group) {
    statement = sql<Row>`SELECT ${select} FROM ${from} WHERE ${where} ORDER BY time ${direction}
      LIMIT ${countLiteral(Math.min(query.limit ?? rowCap, rowCap))}
      ${query.offset ? sql`OFFSET ${countLiteral(query.offset)}` : sql``}`;
  } else if (query.limit === undefined) {
    statement = sql<Row>`SELECT ${group} AS grp, ${select} FROM ${from} WHERE ${where}
      ORDER BY 1 NULLS FIRST, time ${direction} ${cap}`;
  } else {
    // InfluxQL's LIMIT/OFFSET count points per series: number the rows of each group.
    const offset = query.offset ?? 0;
    statement = sql<Row>`SELECT * FROM (
        SELECT ${group} AS grp, ${select}, row_number() OVER (PARTITION BY ${group} ORDER BY time ${direction}) AS rn
        FROM ${from} WHERE ${where}) numbered
      WHERE rn > ${countLiteral(offset)} AND rn <= ${countLiteral(offset + query.limit)} ORDER BY grp NULLS FIRST, rn ${cap}`;
  }
  const columns = ['time', ...table.fields.map((f) => f.name)];
  return { statement, read: (rows, period) => readRows(table, period, group !== undefined, rows, columns) };
}

function readRows(table: TableQuery, period: QueryPeriod, grouped: boolean, rows: Row[], columns: string[]): MetricsSeries[] {
  if (!grouped) {
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

function whereClause(target: StatementTarget): RawBuilder<unknown> {
  const conditions = [sql`device_id = ${target.device}`];
  if (target.start) conditions.push(sql`time >= ${target.start}`);
  if (target.end) conditions.push(sql`time <= ${target.end}`);
  return sql.join(conditions, sql` AND `);
}

function fieldExpression(field: SelectedField): RawBuilder<unknown> {
  if (field.source === undefined) return typedNull(field.absentKind);
  if (field.source === 'device_id') return sql`device_id`;
  return sql.id(safeColumn(field.source.column));
}

/** A NULL of the field's storage type: an untyped one cannot be aggregated (`avg(unknown)` is ambiguous). */
function typedNull(kind: FieldKind | undefined): RawBuilder<unknown> {
  switch (kind) {
    case 'flag': return sql`NULL::boolean`;
    case 'text': return sql`NULL::text`;
    default: return sql`NULL::float8`;
  }
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
      return sql`percentile_disc(${float8Literal((aggregate.percentile ?? 50) / 100)}) WITHIN GROUP (ORDER BY ${c})`;
  }
}

function aggregateTitles(aggregates: Aggregate[], fields: SelectedField[]): string[] {
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

function pageOf<T>(values: T[], query: LookedUpQuery | MetricsQuery): T[] {
  const offset = query.offset ?? 0;
  return values.slice(offset, query.limit === undefined ? undefined : offset + query.limit);
}

function series(table: TableQuery, period: QueryPeriod, row: Row | undefined, values: MetricsSeries['values'],
  columns: string[]): MetricsSeries {
  const tags: Record<string, string> = { ...(period.tags ?? {}) };
  if (table.groupBy) tags[table.groupBy.name] = (row?.grp as string | null) ?? '';
  return { name: table.table, ...(Object.keys(tags).length > 0 ? { tags } : {}), columns, values };
}
