/**
 * `GET /Device/Metrics` as a domain function (spec 4.3): entitlement, the validation rules, the device, its
 * marker periods, the query against the store, and the document in the requested format.
 */
import { ApiFailure } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { deviceNotFound, resolveDeviceIdentity, type DeviceIdentity } from '../domain/device-queries';
import { requireEntitlement } from '../auth/entitlements';
import type { Db } from '../store/database';
import { documentFileName, parseFormat, toCsv, toInfluxJson, type MetricsFormat } from './influx-format';
import { deviceMarkerPeriods, markerQueryPeriod, type MarkerPeriod } from './markers';
import {
  MetricsQueryTimeout, MetricsResultTooLarge, type DeviceLookup, type LookedUpQuery, type LookedUpSeries, type MetricsSeries, type MetricsStore,
  type QueryPeriod, type TableQuery,
} from './metrics-store';
import {
  checkAggregateKinds, DEFAULT_TIMEOUT_SECONDS, parseAggregates, parseOrderBy, parseTables, planTables, requestPeriod,
  validateShape, type MetricsRequest,
} from './query-plan';

interface MetricsDocument {
  fileName: string;
  format: MetricsFormat;
  contentType: string;
  body: string;
  series: MetricsSeries[];
}

export async function queryDeviceMetrics(
  db: Db, store: MetricsStore, user: AuthenticatedUser, identifier: string, request: MetricsRequest, now = new Date(),
): Promise<MetricsDocument> {
  requireEntitlement(user, 'DeviceList');
  validateShape(request);
  const tables = parseTables(request.table);
  const aggregates = parseAggregates(request.aggr);
  const descending = parseOrderBy(request.orderBy);
  const format = parseFormat(request.format);
  const markerOffset = request.markerOffset ?? 0;
  const noMarker = (name: string) =>
    new ApiFailure(`Device '${name}' has no marker '${request.marker}'${markerOffset > 0 ? ` beyond the ${markerOffset} most recent` : ''}.`);
  const marker = request.marker;
  const timeoutMs = (request.timeout ?? DEFAULT_TIMEOUT_SECONDS) * 1000;
  const common = { aggregates, descending, limit: request.limit, offset: request.offset, timeoutMs };

  // The usual query (no marker, or the latest marker period) takes one round trip: the device and marker lookup
  // goes first in the query's own message. It needs the plan first; an unknown device still fails before a
  // field does, as in the general path below.
  if ((marker === undefined || (request.markerLimit ?? 1) === 1) && !`${identifier}${marker ?? ''}`.includes('\0')) {
    let plan: TableQuery[];
    let period: QueryPeriod;
    try {
      plan = await planFor(store, tables, request);
      checkAggregateKinds(aggregates, plan);
      period = requestPeriod(request);
    } catch (err) {
      if (err instanceof ApiFailure) await resolveDeviceIdentity(db, identifier);
      throw err;
    }
    const found = await lookedUp(store, {
      identifier, marker: marker === undefined ? undefined : { name: marker, offset: markerOffset }, now,
    }, { ...common, tables: plan, period });
    if (!found.device) throw new ApiFailure(deviceNotFound(identifier.trim()), 'DEVICE_NOT_FOUND');
    if (!found.period) throw noMarker(found.device.name);
    return documentOf(request, format, found.device, found.series);
  }

  // The device and its marker periods in one round trip, then the query: two in all.
  let markers: MarkerPeriod[] | undefined;
  let device: DeviceIdentity;
  if (marker === undefined) {
    device = await resolveDeviceIdentity(db, identifier);
  } else {
    ({ device, periods: markers } = await deviceMarkerPeriods(db, identifier, marker, request.markerLimit ?? 1, markerOffset));
  }
  const plan = await planFor(store, tables, request);
  checkAggregateKinds(aggregates, plan);
  let periods = [requestPeriod(request)];
  if (markers !== undefined) {
    if (markers.length === 0) throw noMarker(device.name);
    periods = markers.map((period) => markerQueryPeriod(period, now));
  }
  const series = await answer(() => store.query({ ...common, deviceId: device.id, tables: plan, periods }));
  return documentOf(request, format, device, series);
}

async function planFor(store: MetricsStore, tables: ReturnType<typeof parseTables>, request: MetricsRequest): Promise<TableQuery[]> {
  try {
    return planTables(await store.catalog(), tables, request.fields, request.groupBy);
  } catch (err) {
    if (!(err instanceof ApiFailure)) throw err;
    // Another hub (or a batch in flight) may have added the field since this hub read the catalog.
    return planTables(await store.catalog(true), tables, request.fields, request.groupBy);
  }
}

function lookedUp(store: MetricsStore, lookup: DeviceLookup, query: LookedUpQuery): Promise<LookedUpSeries> {
  return answer(() => store.queryLookedUp(lookup, query));
}

/** The store's answer; its timeout and size limit as failures the client reads. */
async function answer<T>(query: () => Promise<T>): Promise<T> {
  try {
    return await query();
  } catch (err) {
    if (err instanceof MetricsQueryTimeout || err instanceof MetricsResultTooLarge) throw new ApiFailure(err.message);
    throw err;
  }
}

function documentOf(request: MetricsRequest, format: MetricsFormat, device: DeviceIdentity, series: MetricsSeries[]): MetricsDocument {
  return {
    fileName: documentFileName(request.filename, device.name, format),
    format,
    contentType: format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
    body: format === 'csv' ? toCsv(series) : toInfluxJson(series),
    series,
  };
}
