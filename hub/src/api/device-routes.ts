/** /Device, /Device/Available, /Device/Log (spec 4.2). */
import { Router } from 'express';
import { ApiFailure, success, successWith } from '@devicelab/shared';
import { readDeviceLog, rebootDevice, releaseDevice, retainDevice } from '../domain/device-actions';
import { listAvailableDevices, listDevices } from '../domain/devices';
import { hasEntitlement, requireEntitlement } from '../http/entitlements';
import { handle } from '../http/handler';
import type { ApiDependencies } from './context';
import { deviceDetailOptions, deviceFilters, operationName, postOperation, requireString, unknownAction } from './params';

export function deviceRouter(deps: ApiDependencies): Router {
  const { db, gateways } = deps;
  const router = Router();

  router.get('/Device', handle(async ({ params, user }) => {
    if (!hasEntitlement(user, 'DeviceList')) return [];
    return listDevices(db, user, deviceFilters(params), deviceDetailOptions(params));
  }));

  router.get('/Device/Available', handle(async ({ params, user }) => {
    if (!hasEntitlement(user, 'DeviceList')) return [];
    return listAvailableDevices(db, user, deviceFilters(params), deviceDetailOptions(params));
  }));

  router.get('/Device/Log', handle(async ({ params, user }) => {
    requireEntitlement(user, 'DeviceList');
    const lines = params.int('lines');
    const id = requireString(params, 'id', 'deviceId');
    return successWith(await readDeviceLog(db, gateways, user, id, lines ?? 1000));
  }));

  router.post('/Device', handle(async ({ params, user }) => {
    const op = postOperation(params);
    switch (op) {
      case 'action:retain':
        return successWith(await retainDevice(db, user, requireString(params, 'id', 'deviceId'),
          { ticketSecret: deps.ticketSecret, now: deps.clock }));
      case 'action:release':
        await releaseDevice(db, user, requireString(params, 'id', 'deviceId'));
        return success();
      case 'action:reboot':
        await rebootDevice(db, gateways, user, requireString(params, 'id', 'deviceId'));
        return success();
      default:
        throw new ApiFailure(unknownAction(operationName(op)));
    }
  }));

  return router;
}
