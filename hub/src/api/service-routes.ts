/** GET /Service: HubInformation; no entitlement required (spec 4.6). */
import { Router } from 'express';
import { deriveServiceNodeId, describeService, hubVersion, type ServiceIdentity } from '../domain/service';
import { handle } from '../http/handler';
import type { ApiDependencies } from './context';

export function serviceRouter(deps: ApiDependencies): Router {
  const router = Router();
  let identity: Promise<ServiceIdentity> | undefined;
  const identify = () => {
    identity ??= (async () => ({
      serviceNodeId: deps.serviceNodeId ?? await deriveServiceNodeId(deps.db),
      serviceVersion: deps.serviceVersion ?? hubVersion(),
    }))().catch((err) => {
      identity = undefined;
      throw err;
    });
    return identity;
  };
  router.get('/Service', handle(async () => describeService(deps.gateways, await identify(), deps.clock())));
  return router;
}
