/** /User (spec 4.4): list with filters, update, import; extension `action=generateToken`. */
import { Router } from 'express';
import { ApiFailure, success, successWith } from '@devicelab/shared';
import { handle } from '../http/handler';
import { jsonBodyReader } from '../http/json-body';
import { userChangeRequest } from './user-body';
import type { RequestParams } from '../http/params';
import { generateUserToken, importUser, modifyUser } from '../domain/users-changes';
import { listUsers, NAME_FIELDS, PROFILE_FIELDS, type UserFilters } from '../domain/users';
import { addAdbKey, listAdbKeys, removeAdbKey } from '../domain/user-adb-keys';
import type { ApiDependencies } from './context';
import { operationName, postOperation, requireGuid, requireString, unknownAction } from './params';

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
  const { db, gateways } = deps;
  const router = Router();

  router.get('/User/AdbKey', handle(async ({ params, user }) => listAdbKeys(db, user, requireGuid(params, 'id'))));

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
      case 'action:addadbkey': {
        // A form field (or query parameter) `key`, or a JSON body {"key": "..."}: the text of adbkey.pub.
        const keyText = () => params.string('key') ?? jsonBodyReader(req, bodyText)().string('key')
          ?? (() => { throw new ApiFailure("Parameter 'key' is required: the text of ~/.android/adbkey.pub."); })();
        return successWith(await addAdbKey(db, user, requireGuid(params, 'id'), keyText, gateways));
      }
      case 'action:removeadbkey':
        await removeAdbKey(db, user, requireGuid(params, 'id'), () => requireString(params, 'fingerprint'), gateways);
        return success();
      case 'action:generatetoken':
        return successWith({ apiToken: await generateUserToken(db, user, requireGuid(params, 'id')) });
      default:
        throw new ApiFailure(unknownAction(operationName(op)));
    }
  }));

  return router;
}
