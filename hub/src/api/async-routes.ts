/** GET /Async?id= (spec 4.7): the bare AsyncStatus. */
import { Router } from 'express';
import { pollAsyncJob } from '../domain/async-jobs';
import { handle } from '../http/handler';
import type { ApiDependencies } from './context';
import { requireGuid } from './params';

export function asyncRouter(deps: ApiDependencies): Router {
  const router = Router();
  router.get('/Async', handle(async ({ params, user }) =>
    pollAsyncJob(deps.db, user, requireGuid(params, 'id'), { clock: deps.clock })));
  return router;
}
