/**
 * Reports (spec 4.5; alternate form spec 9): `/Report/History`, `/Report/Usage`, `/Report/Availability`, and the
 * older `/Report?type=history|usage`, answered on GET and POST alike (the vendor QA suite posts to it).
 */
import { Router } from 'express';
import { ApiFailure, successWith } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { availabilityTimeline } from '../domain/reports-availability';
import { eventHistory } from '../domain/reports-history';
import { resolveReportQuery, type ReportFilters } from '../domain/reports-query';
import { deviceUsageHistory } from '../domain/usage-report';
import { requireEntitlement } from '../auth/entitlements';
import { handle, type Handler } from '../http/handler';
import { echo } from '../http/echo';
import type { RequestParams } from '../http/params';
import type { ApiDependencies } from './context';

/** Every report needs all three, checked in the order spec 4.5 lists them. */
function requireReportEntitlements(user: AuthenticatedUser): void {
  requireEntitlement(user, 'UserList');
  requireEntitlement(user, 'DeviceList');
  requireEntitlement(user, 'ApplicationList');
}

function reportFilters(params: RequestParams): ReportFilters {
  return {
    applicationId: params.guid('applicationId'),
    device: params.string('deviceId'),
    userId: params.guid('userId'),
    fromDate: params.date('fromDate'), // names are case-insensitive: also the older `fromdate`
    toDate: params.date('toDate'),
    days: params.int('days'),
    skip: params.int('skip'),
    take: params.int('take'),
  };
}

const unknownReportType = (type: string): string => `Unknown report type '${echo(type)}'.`;

export function reportRouter(deps: ApiDependencies): Router {
  const { db, clock } = deps;
  const router = Router();

  const history: Handler = async ({ params, user }) => {
    requireReportEntitlements(user);
    return eventHistory(db, await resolveReportQuery(db, reportFilters(params), clock()));
  };
  const usage: Handler = async ({ params, user }) => {
    requireReportEntitlements(user);
    const now = clock();
    return deviceUsageHistory(db, await resolveReportQuery(db, reportFilters(params), now), now);
  };
  const legacy: Handler = async (ctx) => {
    requireReportEntitlements(ctx.user);
    const type = ctx.params.string('type');
    if (type === undefined) throw new ApiFailure(`Parameter 'type' is required.`);
    switch (type.trim().toLowerCase()) {
      case 'history': return history(ctx);
      case 'usage': return usage(ctx);
      default: throw new ApiFailure(unknownReportType(type));
    }
  };

  router.get('/Report/History', handle(history));
  router.get('/Report/Usage', handle(usage));
  router.get('/Report/Availability', handle(async ({ params, user }) => {
    requireReportEntitlements(user);
    const timeline = await availabilityTimeline(db, {
      fromDate: params.date('fromDate'), toDate: params.date('toDate'), days: params.int('days'),
      window: params.string('window'),
    }, clock());
    return successWith(timeline);
  }));
  router.get('/Report', handle(legacy));
  router.post('/Report', handle(legacy));
  return router;
}
