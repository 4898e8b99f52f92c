/**
 * `GET /Device/Metrics` as a domain function (spec 4.3): entitlement, the validation rules, the device, its
 * marker periods, the query against the store, and the document in the requested format.
 */
import { ApiFailure } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { resolveDeviceIdentity, type DeviceIdentity } from '../domain/device-queries';
import { requireEntitlement } from '../auth/entitlements';
import type { Db } from '../store/database';
import { documentFileName, parseFormat, toCsv, toInfluxJson, type MetricsFormat } from './influx-format';
import { deviceMarkerPeriods, markerQueryPeriod, type MarkerPeriod } from './markers';
import { MetricsQueryTimeout, MetricsResultTooLarge, type MetricsQuery, type MetricsSeries, type MetricsStore, type TableQuery } from './metrics-store';
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
  // The device and, for a marker query, its marker periods in one round trip; only id and name are needed.
  const markerOffset = request.markerOffset ?? 0;
  let markers: MarkerPeriod[] | undefined;
  let device: DeviceIdentity;
  if (request.marker === undefined) {
    device = await resolveDeviceIdentity(db, identifier);
  } else {
    ({ device, periods: markers } = await deviceMarkerPeriods(db, identifier, request.marker, request.markerLimit ?? 1, markerOffset));
  }

  let plan: TableQuery[];
  try {
    plan = planTables(await store.catalog(), tables, request.fields, request.groupBy);
  } catch (err) {
    if (!(err instanceof ApiFailure)) throw err;
    // Another hub (or a batch in flight) may have added the field since this hub read the catalog.
    plan = planTables(await store.catalog(true), tables, request.fields, request.groupBy);
  }
  checkAggregateKinds(aggregates, plan);

  let periods = [requestPeriod(request)];
  if (markers !== undefined) {
    if (markers.length === 0) {
      throw new ApiFailure(`Device '${device.name}' has no marker '${request.marker}'${markerOffset > 0 ? ` beyond the ${markerOffset} most recent` : ''}.`);
    }
    periods = markers.map((period) => markerQueryPeriod(period, now));
  }

  const query: MetricsQuery = {
    deviceId: device.id, tables: plan, aggregates, periods, descending,
    limit: request.limit, offset: request.offset,
    timeoutMs: (request.timeout ?? DEFAULT_TIMEOUT_SECONDS) * 1000,
  };
  let series: MetricsSeries[];
  try {
    series = await store.query(query);
  } catch (err) {
    if (err instanceof MetricsQueryTimeout || err instanceof MetricsResultTooLarge) throw new ApiFailure(err.message);
    throw err;
  }
  return {
    fileName: documentFileName(request.filename, device.name, format),
    format,
    contentType: format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
    body: format === 'csv' ? toCsv(series) : toInfluxJson(series),
    series,
  };
}
