/** GET /Service: HubInformation; no entitlement required (spec 4.6). */
import { Router, type Request } from 'express';
import { describeService, hubVersion } from '../domain/service';
import { liveReplicas } from '../fleet/replica-registry';
import { handle } from '../http/handler';
import type { ApiDependencies } from './context';

export function serviceRouter(deps: ApiDependencies): Router {
  const router = Router();
  const identity = { serviceNodeId: deps.serviceNodeId, serviceVersion: deps.serviceVersion ?? hubVersion() };
  // A replica that dies frees its liveness lock without writing anything, and replicas' rows change with every
  // heartbeat (so they send no change notices, store/table-change-notices.ts): the live list is kept 100 ms at most.
  const replicas = (req: Request) => (req.keptReads
    ? deps.kept.kept('liveReplicas', () => liveReplicas(deps.db), { tables: [], maxAgeMs: 100 })
    : liveReplicas(deps.db));
  router.get('/Service', handle(async ({ req }) => describeService(deps.gateways, identity, await replicas(req), deps.clock())));
  return router;
}
