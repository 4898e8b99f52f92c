/** /Device/Metrics (spec 4.3): the query (a document download) and the marker and logging actions. */
import { Router } from 'express';
import { ApiFailure, success } from '@devicelab/shared';
import { handle, NO_REPLY } from '../http/handler';
import type { RequestParams } from '../http/params';
import { queryDeviceMetrics } from '../metrics/device-metrics-query';
import { contentDisposition } from '../metrics/influx-format';
import { startMarker, stopMarker } from '../metrics/markers';
import { setMetricsEnabled } from '../metrics/passive-logging';
import type { MetricsRequest } from '../metrics/query-plan';
import type { ApiDependencies } from './context';
import { operationName, postOperation, requireString, unknownAction } from './params';

export function metricsRouter(deps: ApiDependencies): Router {
  const { db, metrics, gateways } = deps;
  const router = Router();

  router.get('/Device/Metrics', handle(async ({ params, user, res }) => {
    const id = requireString(params, 'id', 'deviceId');
    const document = await queryDeviceMetrics(db, metrics, user, id, metricsRequest(params));
    // `pretty=true` indents the JSON document as it does every other answer (a CSV has nothing to indent).
    const body = document.format !== 'csv' && params.pretty()
      ? JSON.stringify(JSON.parse(document.body), null, 2) : document.body;
    res.status(200).type(document.contentType).set('Content-Disposition', contentDisposition(document.fileName))
      .send(body);
    return NO_REPLY;
  }));

  router.post('/Device/Metrics', handle(async ({ params, user }) => {
    const op = postOperation(params);
    switch (op) {
      case 'action:startmarker':
        await startMarker(db, user, requireString(params, 'id', 'deviceId'), requireString(params, 'name'));
        return success();
      case 'action:stopmarker':
        await stopMarker(db, user, requireString(params, 'id', 'deviceId'), requireString(params, 'name'));
        return success();
      case 'action:enabled': {
        const enable = params.bool('enable');
        if (enable === undefined) throw new ApiFailure("Parameter 'enable' is required.");
        if (await setMetricsEnabled(db, user, requireString(params, 'id', 'deviceId'), enable)) {
          gateways.notifyMetricsSettings();
        }
        return success();
      }
      default:
        throw new ApiFailure(unknownAction(operationName(op)));
    }
  }));

  return router;
}

/** Every parameter of spec 4.3, typed; a malformed number or date fails before anything runs. */
function metricsRequest(params: RequestParams): MetricsRequest {
  const end = params.date('end');
  return {
    table: requireString(params, 'table'),
    fields: params.string('fields'),
    aggr: params.string('aggr'),
    marker: params.string('marker'),
    markerLimit: params.int('markerLimit'),
    markerOffset: params.int('markerOffset'),
    limit: params.int('limit'),
    offset: params.int('offset'),
    start: params.date('start')?.date,
    // A date-only end covers that whole day (wire rule 7, docs/wire-rules.md).
    end: end ? (end.dateOnly ? endOfDay(end.date) : end.date) : undefined,
    groupBy: params.string('groupBy'),
    orderBy: params.string('orderBy'),
    format: params.string('format'),
    filename: params.string('filename'),
    timeout: params.int('timeout'),
  };
}

/** The last millisecond of a local day (days are 23 or 25 hours long across a DST change). */
function endOfDay(midnight: Date): Date {
  const next = new Date(midnight);
  next.setDate(next.getDate() + 1);
  return new Date(next.getTime() - 1);
}
