/** Extension /Webhook (administrators): list, add, delete endpoints; /Webhook/Delivery: one endpoint's delivery log. */
import { Router } from 'express';
import { ApiFailure, success, successWith } from '@devicelab/shared';
import { handle } from '../http/handler';
import { jsonBodyReader } from '../http/json-body';
import { addWebhook, deleteWebhook, listWebhooks, webhookDeliveries } from '../webhooks/webhooks';
import type { ApiDependencies } from './context';
import { webhookInput } from './webhook-body';
import { operationName, postOperation, unknownAction } from './params';

export function webhookRouter(deps: ApiDependencies): Router {
  const { db } = deps;
  const router = Router();

  router.get('/Webhook', handle(async ({ user }) => successWith(await listWebhooks(db, user))));

  router.get('/Webhook/Delivery', handle(async ({ params, user }) => {
    const id = params.guid('id');
    if (id === undefined) throw new ApiFailure("Parameter 'id' (the webhook) is required.");
    return successWith(await webhookDeliveries(db, user, id));
  }));

  router.post('/Webhook', handle(async ({ params, user, req, bodyText }) => {
    const op = postOperation(params);
    switch (op) {
      case 'verb:add':
        return successWith(await addWebhook(db, user, webhookInput(jsonBodyReader(req, bodyText))));
      case 'verb:delete':
      case 'action:delete': {
        const id = params.guid('id');
        if (id === undefined) throw new ApiFailure("Parameter 'id' is required.");
        await deleteWebhook(db, user, id);
        return success();
      }
      default:
        throw new ApiFailure(unknownAction(operationName(op)));
    }
  }));

  return router;
}
