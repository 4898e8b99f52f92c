/** /Device, /Device/Available, /Device/Log, /Device/AppiumLog (spec 4.2). */
import { Router, type RequestHandler } from 'express';
import { ApiFailure, success, successWith } from '@devicelab/shared';
import { readDeviceLog, rebootDevice, releaseDevice } from '../domain/device-actions';
import { readAutomationLog, readAutomationSession } from '../domain/device-automation-log';
import { resetDevice } from '../domain/device-reset';
import { deleteDevice, setDeviceEnabled, updateDevice } from '../domain/device-updates';
import { listAvailableDevices, listDevices } from '../domain/devices';
import { listWaitingFor } from '../domain/waiting-line';
import { renewLease } from '../domain/lease-renewal';
import { handle, NO_REPLY } from '../http/handler';
import type { FirstReads } from '../http/first-reads';
import { writeKeptJson } from '../http/kept-json';
import type { ApiDependencies } from './context';
import { deviceChangeRequest } from './device-body';
import { deviceDetailOptions, deviceFilters, operationName, postOperation, requireString, unknownAction } from './params';
import { retainRequest } from './retain-request';

export function deviceRouter(deps: ApiDependencies, firstReads?: FirstReads): Router {
  const { db, gateways } = deps;
  const router = Router();

  // Filters are read only once DeviceList is checked: a lister without it gets [] whatever it sent.
  // Polled: also answered before the generic middleware when they can be (http/first-reads.ts).
  const first = (path: string, handler: RequestHandler) => firstReads?.add(path, handler) ?? handler;
  router.get('/Device', first('/Device', handle(async ({ req, res, params, user, listStamps }) => {
    const devices = await listDevices(db, user, () => deviceFilters(params), () => deviceDetailOptions(params), listStamps);
    await writeKeptJson(req, res, devices, params.pretty());
    return NO_REPLY;
  })));

  router.get('/Device/Available', first('/Device/Available', handle(async ({ req, res, params, user, listStamps }) => {
    const devices = await listAvailableDevices(db, user, () => deviceFilters(params), () => deviceDetailOptions(params), listStamps);
    await writeKeptJson(req, res, devices, params.pretty());
    return NO_REPLY;
  })));

  router.get('/Device/WaitingLine', handle(async ({ user }) => successWith(await listWaitingFor(deps, user))));

  router.get('/Device/Log', handle(async ({ params, user }) => {
    const lines = params.int('lines');
    const id = requireString(params, 'id', 'deviceId');
    return successWith(await readDeviceLog(db, gateways, user, id, lines ?? 1000));
  }));

  router.get('/Device/AppiumLog', handle(async ({ params, user }) => {
    const id = requireString(params, 'id', 'deviceId');
    const currentSessionOnly = params.bool('currentSessionOnly');
    return successWith(await readAutomationLog(db, gateways, user, id, { currentSessionOnly }));
  }));

  router.get('/Device/AutomationSession', handle(async ({ params, user }) => {
    const id = requireString(params, 'id', 'deviceId');
    const session = await readAutomationSession(db, user, id);
    return session ? successWith(session) : success();
  }));

  router.post('/Device', handle(async ({ res, params, user, bodyText }) => {
    const op = postOperation(params);
    switch (op) {
      case 'action:retain':
        return successWith(await retainRequest(deps, res, params, user));
      case 'action:renew':
        return successWith(await renewLease(db, user, requireString(params, 'id', 'deviceId'),
          { minutes: () => params.int('minutes'), now: deps.clock }));
      case 'action:release':
        await releaseDevice(db, user, requireString(params, 'id', 'deviceId'), { now: deps.clock, gateways });
        return success();
      case 'action:reboot':
        await rebootDevice(db, gateways, user, requireString(params, 'id', 'deviceId'));
        return success();
      case 'verb:update':
        await updateDevice(db, user, requireString(params, 'id', 'deviceId'), deviceChangeRequest(bodyText), gateways);
        return success();
      case 'verb:delete':
        await deleteDevice(db, user, requireString(params, 'id', 'deviceId'), gateways);
        return success();
      case 'action:enable':
      case 'action:disable':
        await setDeviceEnabled(db, user, requireString(params, 'id', 'deviceId'), op === 'action:enable', gateways);
        return success();
      case 'action:reset': {
        // Parsed before any check: a malformed boolean changes nothing.
        const options = { uninstallAll: params.bool('uninstallAll'), reboot: params.bool('reboot') };
        await resetDevice(db, gateways, user, requireString(params, 'id', 'deviceId'), options);
        return success();
      }
      default:
        throw new ApiFailure(unknownAction(operationName(op)));
    }
  }));

  return router;
}
