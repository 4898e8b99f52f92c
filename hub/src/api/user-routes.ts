/** /User (spec 4.4): list with filters, update, import; extension `action=generateToken`. */
import { Router } from 'express';
import { ApiFailure, success, successWith } from '@devicelab/shared';
import { handle } from '../http/handler';
import { jsonBodyReader } from '../http/json-body';
import { userChangeRequest } from './user-body';
import type { RequestParams } from '../http/params';
import { generateUserToken, importUser, modifyUser } from '../domain/users-changes';
import { listUsers, NAME_FIELDS, PROFILE_FIELDS, type UserFilters } from '../domain/users';
import type { ApiDependencies } from './context';
import { operationName, postOperation, requireGuid, unknownAction } from './params';

function userFilters(params: RequestParams): UserFilters {
  const names: UserFilters['names'] = {};
  for (const field of Object.keys(NAME_FIELDS) as (keyof typeof NAME_FIELDS)[]) {
    const value = params.string(field);
    if (value !== undefined) names[field] = value;
  }
  const profile: UserFilters['profile'] = {};
  for (const field of PROFILE_FIELDS) {
    const value = params.string(field);
    if (value !== undefined) profile[field] = value;
  }
  return {
    id: params.guid('id'),
    userName: params.stringOf('userName', 'email'),
    isActive: params.bool('isActive'),
    names,
    profile,
  };
}

export function userRouter(deps: ApiDependencies): Router {
  const { db } = deps;
  const router = Router();

  router.get('/User', handle(async ({ params, user }) => listUsers(db, user, userFilters(params))));

  router.post('/User', handle(async ({ params, user, req, bodyText }) => {
    const op = postOperation(params);
    const changes = userChangeRequest(jsonBodyReader(req, bodyText));
    switch (op) {
      case 'verb:update':
        await modifyUser(db, user, requireGuid(params, 'id'), changes);
        return success();
      case 'verb:add':
        // Synchronous: `wait=true` (what clients send) and no wait both answer the ResultModel.
        await importUser(db, user, changes);
        return success();
      case 'action:generatetoken':
        return successWith({ apiToken: await generateUserToken(db, user, requireGuid(params, 'id')) });
      default:
        throw new ApiFailure(unknownAction(operationName(op)));
    }
  }));

  return router;
}
