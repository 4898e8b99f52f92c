/** GET /Service: HubInformation; no entitlement required (spec 4.6). */
import { Router, type Request } from 'express';
import { hubVersion, sameServiceDescription } from '../domain/service';
import { liveReplicas } from '../fleet/replica-registry';
import type { FirstReads } from '../http/first-reads';
import { handle, NO_REPLY } from '../http/handler';
import { writeKeptJson } from '../http/kept-json';
import type { ApiDependencies } from './context';

export function serviceRouter(deps: ApiDependencies, firstReads?: FirstReads): Router {
  const router = Router();
  const identity = { serviceNodeId: deps.serviceNodeId, serviceVersion: deps.serviceVersion ?? hubVersion() };
  // A replica that dies frees its liveness lock without writing anything, and replicas' rows change with every
  // heartbeat (so they send no change notices, store/table-change-notices.ts): the live list is kept 100 ms at most.
  const replicas = (req: Request) => (req.keptReads
    ? deps.kept.kept('liveReplicas', () => liveReplicas(deps.db), { tables: [], maxAgeMs: 100 })
    : liveReplicas(deps.db));
  // Polled, and the same for a second at a time: its bytes are kept while it is, and it is also answered before the
  // generic middleware when it can be (http/first-reads.ts).
  const describe = sameServiceDescription();
  const service = handle(async ({ req, res, params }) => {
    await deps.gateways.settled?.();
    await writeKeptJson(req, res, describe(deps.gateways, identity, await replicas(req), deps.clock()), params.pretty());
    return NO_REPLY;
  });
  router.get('/Service', firstReads?.add('/Service', service) ?? service);
  return router;
}
