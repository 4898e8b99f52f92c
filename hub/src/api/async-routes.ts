/** GET /Async?id= (spec 4.7): the bare AsyncStatus. */
import { Router } from 'express';
import { pollAsyncJob } from '../domain/async-jobs';
import { reconcileInterruptedJob } from '../domain/interrupted-jobs';
import { handle } from '../http/handler';
import type { ApiDependencies } from './context';
import { requireGuid } from './params';

export function asyncRouter(deps: ApiDependencies): Router {
  const router = Router();
  router.get('/Async', handle(async ({ params, user }) => {
    const id = requireGuid(params, 'id');
    await reconcileInterruptedJob(deps.db, id, deps.clock?.());
    return pollAsyncJob(deps.db, user, id, { clock: deps.clock });
  }));
  return router;
}
