/**
 * /Gateway (spec 4.6) and /Device/UsbPort (spec 4.2): the gateways with their USB hubs, and switching hub
 * ports or rebooting a hub through the gateway that owns it.
 */
import { Router } from 'express';
import { ApiFailure, success } from '@devicelab/shared';
import { readDataPortState } from '../domain/hub-settings';
import { listGateways, parsePortState, rebootUsbHub, setDevicePortState, setHubPortState } from '../domain/usb-hubs';
import { requireEntitlement } from '../auth/entitlements';
import { handle } from '../http/handler';
import { keepRead, type ApiDependencies } from './context';
import { operationName, postOperation, requireString, unknownAction } from './params';

export function gatewayRouter(deps: ApiDependencies): Router {
  const { db, gateways } = deps;
  const router = Router();

  router.get('/Gateway', handle(async ({ req, user }) => {
    requireEntitlement(user, 'SystemViewGateways');
    const keep = keepRead(deps, req);
    const dataPortState = await keep('dataPortState', () => readDataPortState(db, deps.dataPortState), ['hub_settings']);
    return listGateways(db, gateways, dataPortState, keep);
  }));

  router.post('/Gateway/UsbHub', handle(async ({ params, user }) => {
    requireEntitlement(user, 'SystemManageUsbHubs');
    const op = postOperation(params);
    switch (op) {
      case 'verb:update': {
        // Parsed before anything is sent: bad input changes nothing.
        const state = parsePortState(params.string('usbHubPortState'));
        const port = params.int('usbHubPort');
        await setHubPortState(db, gateways, user, requireString(params, 'id'), port, state);
        return success();
      }
      case 'action:reboot':
        await rebootUsbHub(gateways, requireString(params, 'id'));
        return success();
      default:
        throw new ApiFailure(unknownAction(operationName(op)));
    }
  }));

  router.post('/Device/UsbPort', handle(async ({ params, user }) => {
    requireEntitlement(user, 'SystemManageUsbHubs');
    const op = postOperation(params);
    if (op !== 'verb:update') throw new ApiFailure(unknownAction(operationName(op)));
    const state = parsePortState(params.string('usbHubPortState'));
    await setDevicePortState(db, gateways, user, requireString(params, 'id', 'deviceId'), state);
    return success();
  }));

  return router;
}
