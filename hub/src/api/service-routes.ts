/** GET /Service: HubInformation; no entitlement required (spec 4.6). */
import { Router } from 'express';
import { describeService, hubVersion } from '../domain/service';
import { liveReplicas } from '../fleet/replica-registry';
import { handle } from '../http/handler';
import type { ApiDependencies } from './context';

export function serviceRouter(deps: ApiDependencies): Router {
  const router = Router();
  const identity = { serviceNodeId: deps.serviceNodeId, serviceVersion: deps.serviceVersion ?? hubVersion() };
  router.get('/Service', handle(async () =>
    describeService(deps.gateways, identity, await liveReplicas(deps.db), deps.clock())));
  return router;
}
