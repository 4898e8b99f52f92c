/**
 * The rules of spec 4.3 and 7.4 for `GET /Device/Metrics`: the request's text resolved against the table
 * allow-list and the field catalog into a MetricsQuery, or an ApiFailure naming what is wrong. Nothing of the
 * request's text survives into the query except values that are bound as parameters.
 */
import { ApiFailure } from '@devicelab/shared';
import {
  AGGREGATE_FUNCTIONS, METRIC_TABLES, type Aggregate, type CatalogField, type FieldCatalog, type FieldKind, type MetricTableName,
  type QueryPeriod, type SelectedField, type TableQuery,
} from './metrics-store';

/** The parameters of a metrics query, typed (the HTTP layer parsed ints, dates and booleans). */
export interface MetricsRequest {
  table: string;
  fields?: string;
  aggr?: string;
  marker?: string;
  markerLimit?: number;
  markerOffset?: number;
  limit?: number;
  offset?: number;
  start?: Date;
  /** Inclusive upper bound. */
  end?: Date;
  groupBy?: string;
  orderBy?: string;
  format?: string;
  filename?: string;
  /** Seconds. */
  timeout?: number;
}

export const DEFAULT_TIMEOUT_SECONDS = 120;
/** A longer query holds a database connection for too long; split it. */
const MAX_TIMEOUT_SECONDS = 3600;

const FUNCTION_LIST = `${AGGREGATE_FUNCTIONS.join(', ')}, percentile_NN`;
const NUMERIC_ONLY = new Set(['sum', 'mean', 'median', 'spread', 'stddev', 'min', 'max', 'percentile']);

/** Spec 7.4's validation failures, and the range checks of the numeric parameters. */
export function validateShape(request: MetricsRequest): void {
  if (request.aggr !== undefined && request.fields === undefined) {
    throw new ApiFailure("Parameter 'aggr' requires 'fields': name the fields the functions apply to.");
  }
  if (request.offset !== undefined && request.limit === undefined) {
    throw new ApiFailure("Parameter 'offset' is allowed only together with 'limit'.");
  }
  if (request.limit === undefined && request.marker === undefined && request.start === undefined && request.end === undefined) {
    throw new ApiFailure("A metrics query needs at least one of 'limit', 'marker', 'start' or 'end'.");
  }
  atLeast('limit', request.limit, 0);
  atLeast('offset', request.offset, 0);
  atLeast('markerLimit', request.markerLimit, 1);
  atLeast('markerOffset', request.markerOffset, 0);
  atLeast('timeout', request.timeout, 1);
  if (request.timeout !== undefined && request.timeout > MAX_TIMEOUT_SECONDS) {
    throw new ApiFailure(`Parameter 'timeout' must be at most ${MAX_TIMEOUT_SECONDS} seconds.`);
  }
  if (request.marker === undefined && request.start && request.end && request.start > request.end) {
    throw new ApiFailure("Parameter 'start' must not be later than 'end'.");
  }
}

function atLeast(name: string, value: number | undefined, min: number): void {
  if (value !== undefined && value < min) throw new ApiFailure(`Parameter '${name}' must be ${min} or more.`);
}

export function parseTables(text: string): MetricTableName[] {
  const tables: MetricTableName[] = [];
  for (const name of splitList(text)) {
    const table = METRIC_TABLES.find((t) => t === name.toLowerCase());
    if (!table) throw new ApiFailure(`Unknown metrics table '${name}'. Tables: ${METRIC_TABLES.join(', ')}.`);
    if (!tables.includes(table)) tables.push(table);
  }
  if (tables.length === 0) throw new ApiFailure("Parameter 'table' is required.");
  return tables;
}

export function parseAggregates(text: string | undefined): Aggregate[] {
  if (text === undefined) return [];
  const aggregates: Aggregate[] = [];
  for (const name of splitList(text)) {
    const lower = name.toLowerCase();
    const percentile = /^percentile_(\d{1,3}(?:\.\d{1,6})?)$/.exec(lower);
    let aggregate: Aggregate | undefined;
    if (percentile) {
      const value = Number(percentile[1]);
      if (value > 100) throw new ApiFailure(`Percentile must be between 0 and 100: '${name}'.`);
      aggregate = { name: 'percentile', percentile: value, label: lower };
    } else {
      const fn = AGGREGATE_FUNCTIONS.find((f) => f === lower);
      if (!fn) throw new ApiFailure(`Unknown aggregate function '${name}'. Functions: ${FUNCTION_LIST}.`);
      aggregate = { name: fn, label: fn };
    }
    if (!aggregates.some((a) => a.label === aggregate.label)) aggregates.push(aggregate);
  }
  return aggregates;
}

/**
 * Every table with its output columns. Without `fields`, all of each table's fields (and device_id); with
 * them, the same columns for every table, NULL where a table lacks a field. A field no table has is refused.
 */
export function planTables(
  catalog: FieldCatalog, tables: MetricTableName[], fieldsText: string | undefined, groupByText: string | undefined,
): TableQuery[] {
  const requested = fieldsText === undefined ? undefined
    : [...new Set(splitList(fieldsText))].filter((name) => name.toLowerCase() !== 'time');
  if (requested !== undefined && requested.length === 0) throw new ApiFailure("Parameter 'fields' names no field.");
  const groupBy = groupByText?.trim();
  if (groupBy !== undefined && groupBy.includes(',')) throw new ApiFailure("Parameter 'groupBy' takes one field name.");

  /** The field as the first table that has it: its output name and kind (`device_id` is in every table). */
  const resolved = (name: string, what: string): { name: string; kind: FieldKind } => {
    const found = tables.map((table) => resolveField(catalog, table, name)).find((f) => f !== undefined);
    if (!found) throw new ApiFailure(`Unknown ${what} '${name}' in table${tables.length > 1 ? 's' : ''} ${tables.join(', ')}.`);
    return found === 'device_id' ? { name: 'device_id', kind: 'text' } : { name: found.field, kind: found.kind };
  };
  const select = (table: MetricTableName, asked: string, field: { name: string; kind: FieldKind }): SelectedField => {
    const source = resolveField(catalog, table, asked);
    return source ? { name: field.name, source } : { name: field.name, source, absentKind: field.kind };
  };
  const names = requested?.map((name) => [name, resolved(name, 'field')] as const);
  const group = groupBy === undefined ? undefined : resolved(groupBy, 'groupBy field');

  return tables.map((table) => {
    const fields: SelectedField[] = names
      ? names.map(([asked, field]) => select(table, asked, field))
      : [{ name: 'device_id', source: 'device_id' as const },
        ...(catalog.get(table) ?? []).map((entry) => ({ name: entry.field, source: entry }))];
    const plan: TableQuery = { table, fields };
    if (groupBy !== undefined && group !== undefined) {
      plan.groupBy = select(table, groupBy, group);
      plan.fields = plan.fields.filter((f) => f.name !== group.name || names !== undefined);
    }
    return plan;
  });
}

/** Aggregates that need numbers refuse text and flag fields. */
export function checkAggregateKinds(aggregates: Aggregate[], tables: TableQuery[]): void {
  for (const aggregate of aggregates) {
    if (!NUMERIC_ONLY.has(aggregate.name)) continue;
    for (const table of tables) {
      for (const field of table.fields) {
        const kind = field.source === 'device_id' ? 'text (a device id)' : field.source?.kind === 'number' ? undefined
          : field.source ? field.source.kind : undefined;
        if (kind) {
          throw new ApiFailure(`Function '${aggregate.label}' needs numeric fields; '${field.name}' of table ${table.table} holds ${kind}.`);
        }
      }
    }
  }
}

/**
 * A field of one table by the name a client sent: exact, then ignoring case, then without a `Group: ` prefix
 * (`Memory: Used` -> `Used`, design.md). `device_id` is in every table.
 */
function resolveField(catalog: FieldCatalog, table: MetricTableName, name: string): CatalogField | 'device_id' | undefined {
  const trimmed = name.trim();
  const fields = catalog.get(table) ?? [];
  const find = (candidate: string): CatalogField | 'device_id' | undefined => {
    if (candidate.toLowerCase() === 'device_id') return 'device_id';
    return fields.find((f) => f.field === candidate) ?? fields.find((f) => f.field.toLowerCase() === candidate.toLowerCase());
  };
  const direct = find(trimmed);
  if (direct) return direct;
  const colon = trimmed.indexOf(':');
  return colon > 0 ? find(trimmed.slice(colon + 1).trim()) : undefined;
}

/** `time`, `time asc` or `time desc` (the space arrives URL-encoded); true for descending. */
export function parseOrderBy(text: string | undefined): boolean {
  if (text === undefined) return false;
  const m = /^\s*time(?:\s+(asc|desc))?\s*$/i.exec(text);
  if (!m) throw new ApiFailure("Parameter 'orderBy' supports only 'time', optionally followed by 'asc' or 'desc'.");
  return m[1]?.toLowerCase() === 'desc';
}

/** The request's own time window, when it names no marker. */
export function requestPeriod(request: MetricsRequest): QueryPeriod {
  return { start: request.start, end: request.end };
}

function splitList(text: string): string[] {
  return text.split(',').map((part) => part.trim()).filter((part) => part !== '');
}
