/** Extension /Role: list roles with entitlements; add, update (rename, entitlements), delete. */
import { Router } from 'express';
import { ApiFailure, success } from '@devicelab/shared';
import { handle } from '../http/handler';
import { jsonBodyReader } from '../http/json-body';
import { roleChanges } from './role-body';
import type { RequestParams } from '../http/params';
import { addRole, deleteRole, listRoles, updateRole, type RoleRef } from '../domain/roles';
import type { ApiDependencies } from './context';
import { operationName, postOperation, unknownAction } from './params';

/** `id=<guid>` or `name=<role name>` in the query or form. */
function roleRef(params: RequestParams): RoleRef {
  const id = params.guid('id');
  if (id !== undefined) return { id };
  const name = params.string('name');
  if (name !== undefined) return { name: name.normalize('NFC') }; // as role names are stored
  throw new ApiFailure("Parameter 'name' (or 'id') is required.");
}

export function roleRouter(deps: ApiDependencies): Router {
  const { db } = deps;
  const router = Router();

  router.get('/Role', handle(async ({ user }) => listRoles(db, user)));

  router.post('/Role', handle(async ({ params, user, req, bodyText }) => {
    const op = postOperation(params);
    const changes = roleChanges(jsonBodyReader(req, bodyText));
    switch (op) {
      case 'verb:add':
        await addRole(db, user, changes);
        return success();
      case 'verb:update':
        await updateRole(db, user, roleRef(params), changes);
        return success();
      case 'verb:delete':
        await deleteRole(db, user, roleRef(params));
        return success();
      default:
        throw new ApiFailure(unknownAction(operationName(op)));
    }
  }));

  return router;
}
