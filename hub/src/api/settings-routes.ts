/** /Settings (extension): the reset defaults, the /Gateway port state name and the licensed device limit. */
import { Router } from 'express';
import { ApiFailure, success, successWith } from '@devicelab/shared';
import { getHubSettings, updateHubSettings } from '../domain/hub-settings';
import { handle } from '../http/handler';
import type { ApiDependencies } from './context';
import { settingsChanges } from './settings-body';
import { operationName, postOperation, unknownAction } from './params';

export function settingsRouter(deps: ApiDependencies): Router {
  const { db } = deps;
  const router = Router();

  router.get('/Settings', handle(async ({ user }) => successWith(await getHubSettings(db, user, deps.dataPortState))));

  router.post('/Settings', handle(async ({ params, user, bodyText }) => {
    const op = postOperation(params);
    if (op !== 'verb:update') throw new ApiFailure(unknownAction(operationName(op)));
    await updateHubSettings(db, user, settingsChanges(bodyText));
    return success();
  }));

  return router;
}
