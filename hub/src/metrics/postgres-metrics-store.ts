/**
 * The default MetricsStore: wide typed tables in the hub's PostgreSQL (migration 009), one batched
 * `INSERT ... SELECT FROM unnest(...)` per table and batch, daily partitions, retention by dropping whole days.
 */
import { sql, type RawBuilder } from 'kysely';
import { createLogger, type Logger } from '@devicelab/shared';
import { sqlStateOf, withTx, type Db, type Tx } from '../store/database';
import { acceptableFieldName, PostgresFieldCatalog, safeColumn } from './field-catalog';
import {
  METRIC_TABLES, type DeviceLookup, type FieldCatalog, type LookedUpQuery, type LookedUpSeries, type FieldKind, type FieldValue, type IngestClaim, type IngestOutcome,
  type MetricsQuery, type MetricsRow, type MetricsSeries, type MetricsStore, type MetricTableName,
} from './metrics-store';
import { microsToTimestamp } from './metric-time';
import { DailyPartitions, dayOfDate, dayOfMicros } from './partitions';
import { runLookedUpQuery, runPostgresQuery } from './postgres-query';

/** Rows further ahead of the hub's clock than this are refused (a gateway with a wrong clock). */
const MAX_FUTURE_DAYS = 1;
/** check_violation: PostgreSQL's "no partition of relation ... found for row". */
const NO_PARTITION_FOR_ROW = '23514';

interface PostgresMetricsStoreOptions {
  logger?: Logger;
  /** Rows older than this many days are not stored (they would land in an already dropped partition). */
  retentionDays?: number;
  /** Most rows one query answers (results are built in memory); a larger one fails clearly. */
  maxQueryRows?: number;
}

const DEFAULT_MAX_QUERY_ROWS = 1_000_000;

export class PostgresMetricsStore implements MetricsStore {
  private readonly fields: PostgresFieldCatalog;
  private readonly partitions: DailyPartitions;
  private readonly logger: Logger;
  private retentionDays: number;
  private readonly maxQueryRows: number;

  constructor(private readonly db: Db, options: PostgresMetricsStoreOptions = {}) {
    this.maxQueryRows = options.maxQueryRows ?? DEFAULT_MAX_QUERY_ROWS;
    this.fields = new PostgresFieldCatalog(db);
    this.partitions = new DailyPartitions(db);
    this.logger = options.logger ?? createLogger('metrics');
    this.retentionDays = options.retentionDays ?? DEFAULT_RETENTION_DAYS;
  }

  catalog(refresh = false): Promise<FieldCatalog> {
    return this.fields.load(refresh);
  }

  async prepare(now = new Date()): Promise<void> {
    const today = dayOfDate(now);
    const ahead: [MetricTableName, number][] = [];
    for (const table of METRIC_TABLES) ahead.push([table, today], [table, today + 1]);
    await this.partitions.ensure(ahead);
  }

  async applyRetention(days: number, now = new Date()): Promise<string[]> {
    this.retentionDays = days;
    return this.partitions.dropOlderThan(days, now);
  }

  async ingest(rows: readonly MetricsRow[], now = new Date(), claim?: IngestClaim): Promise<IngestOutcome> {
    const outcome: IngestOutcome = { stored: 0, outOfWindow: 0, droppedValues: 0 };
    if (rows.length === 0) return outcome;
    await this.fields.load();
    const today = dayOfDate(now);
    // One pass over the values, column arrays keyed by field name (the catalog is consulted per field, not per value).
    const batches = new Map<MetricTableName, TableBatch>();
    const days = new Map<string, [MetricTableName, number]>();
    for (const row of rows) {
      const day = dayOfMicros(row.timeUs);
      if (!Number.isFinite(row.timeUs) || day < today - this.retentionDays || day > today + MAX_FUTURE_DAYS) {
        outcome.outOfWindow++;
        continue;
      }
      let batch = batches.get(row.table);
      if (!batch) batches.set(row.table, (batch = { deviceIds: [], times: [], columns: new Map(), lastDay: NaN }));
      if (day !== batch.lastDay) {
        batch.lastDay = day;
        days.set(`${row.table}/${day}`, [row.table, day]);
      }
      const i = batch.deviceIds.length;
      batch.deviceIds.push(row.deviceId);
      batch.times.push(microsToTimestamp(row.timeUs));
      for (const [field, value] of row.values) {
        let column = batch.columns.get(field);
        if (!column) batch.columns.set(field, (column = []));
        column[i] = value;
      }
    }
    const sample = batches.get('sample');
    if (sample) {
      const newFields = new Map<string, FieldKind>();
      for (const [field, values] of sample.columns) {
        if (this.fields.lookup('sample', field) || !acceptableFieldName(field)) continue;
        newFields.set(field, kindOf(values.find((v) => v !== undefined) as FieldValue));
      }
      if (newFields.size > 0) {
        const refused = await this.fields.addSampleFields(newFields);
        if (refused > 0) this.logger.warn({ refused }, 'metrics catalog full: new sample fields dropped');
      }
    }
    await this.partitions.ensure(days.values());
    const statements: RawBuilder<unknown>[] = [];
    for (const [table, batch] of batches) {
      const { statement, dropped } = this.insertStatement(table, batch);
      outcome.droppedValues += dropped;
      statements.push(statement);
    }
    const stored = [...batches.values()].reduce((sum, batch) => sum + batch.deviceIds.length, 0);
    if (claim && statements.length > 0) {
      // Catalog and partitions are ready (outside the transaction: they are shared and idempotent); the claim and
      // every row commit together, or nothing does.
      const written = await this.retryingLostPartition(days, () => withTx(this.db, async (trx) => {
        if (!(await claim(trx))) return false;
        await executeAll(statements, trx);
        return true;
      }));
      if (!written) return { ...outcome, duplicate: true };
    } else {
      for (const statement of statements) await this.retryingLostPartition(days, () => statement.execute(this.db));
    }
    outcome.stored = stored;
    return outcome;
  }

  /** A partition this hub believed in is gone (dropped by another hub's retention, or by hand): look again, once. */
  private async retryingLostPartition<T>(days: Map<string, [MetricTableName, number]>, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if (sqlStateOf(err) !== NO_PARTITION_FOR_ROW) throw err;
      await this.partitions.ensure(days.values(), true);
      return write();
    }
  }

  query(query: MetricsQuery): Promise<MetricsSeries[]> {
    return runPostgresQuery(this.db, query, this.maxQueryRows);
  }

  queryLookedUp(lookup: DeviceLookup, query: LookedUpQuery): Promise<LookedUpSeries> {
    return runLookedUpQuery(this.db, lookup, query, this.maxQueryRows);
  }

  /** One `INSERT ... SELECT * FROM unnest($1::uuid[], $2::timestamptz[], ...)` for every row of one table. */
  private insertStatement(table: MetricTableName, batch: TableBatch): { statement: RawBuilder<unknown>; dropped: number } {
    const count = batch.deviceIds.length;
    let dropped = 0;
    const names = [sql`device_id`, sql`time`];
    const arrays = [sql`${batch.deviceIds}::uuid[]`, sql`${batch.times}::timestamptz[]`];
    for (const [field, values] of batch.columns) {
      const entry = this.fields.lookup(table, field);
      if (entry && values.every((value) => typeof value === JS_TYPE[entry.kind])) {
        // The common case: every value already has the column's type. Holes travel as NULL (pg writes
        // undefined array elements as NULL), so the array goes as it is.
        values.length = count;
        names.push(sql.id(safeColumn(entry.column)));
        arrays.push(sql`${values}::${sql.raw(ARRAY_TYPE[entry.kind])}`);
        continue;
      }
      const stored = new Array<FieldValue | null>(count);
      for (let i = 0; i < count; i++) {
        const value = values[i];
        if (value === undefined) {
          stored[i] = null;
          continue;
        }
        const converted = entry ? convert(value, entry.kind) : undefined;
        if (converted === undefined) dropped++;
        stored[i] = converted ?? null;
      }
      if (!entry) continue;
      names.push(sql.id(safeColumn(entry.column)));
      arrays.push(sql`${stored}::${sql.raw(ARRAY_TYPE[entry.kind])}`);
    }
    const statement = sql`INSERT INTO ${sql.id('metrics', table)} (${sql.join(names)})
      SELECT * FROM unnest(${sql.join(arrays)})`;
    return { statement, dropped };
  }
}

async function executeAll(statements: readonly RawBuilder<unknown>[], trx: Tx): Promise<void> {
  for (const statement of statements) await statement.execute(trx);
}

/** The rows of one table in a batch, as column arrays. */
interface TableBatch {
  deviceIds: string[];
  times: string[];
  /** Field name -> value per row (holes where a row lacks the field). */
  columns: Map<string, (FieldValue | undefined)[]>;
  lastDay: number;
}

export const DEFAULT_RETENTION_DAYS = 30;

const ARRAY_TYPE: Record<FieldKind, string> = { number: 'float8[]', text: 'text[]', flag: 'boolean[]' };
const JS_TYPE: Record<FieldKind, string> = { number: 'number', text: 'string', flag: 'boolean' };

function kindOf(value: FieldValue): FieldKind {
  return typeof value === 'number' ? 'number' : typeof value === 'boolean' ? 'flag' : 'text';
}

/** A value in the column's kind; undefined when it cannot be (text into a number column). */
function convert(value: FieldValue, kind: FieldKind): FieldValue | undefined {
  switch (kind) {
    case 'number':
      if (typeof value === 'number') return value;
      return typeof value === 'boolean' ? (value ? 1 : 0) : undefined;
    case 'flag':
      if (typeof value === 'boolean') return value;
      return typeof value === 'number' ? value !== 0 : undefined;
    case 'text':
      return typeof value === 'string' ? value : String(value);
  }
}
