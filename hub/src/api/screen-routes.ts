/**
 * Extension routes of the live screen (the screen itself is the WebSocket `/Device/Screen`): view-only shares of a
 * retained device (`/Device/Share`: make, list with the current viewers, revoke) and still images
 * (`/Device/Screenshot`) for the grid and the download.
 */
import { Router } from 'express';
import { success, successWith } from '@devicelab/shared';
import { NO_REPLY, handle } from '../http/handler';
import { createScreenShare, listScreenShares, revokeScreenShare } from '../domain/screen-shares';
import type { ScreenStills } from '../domain/screen-stills';
import type { ScreenViewers } from '../domain/screen-viewers';
import type { ApiDependencies } from './context';
import { requireGuid, requireString } from './params';

export interface ScreenRouteDependencies {
  viewers: ScreenViewers;
  stills: ScreenStills;
}

export function screenRouter(deps: ApiDependencies, screen: ScreenRouteDependencies): Router {
  const { db } = deps;
  const router = Router();

  router.get('/Device/Share', handle(async ({ params, user }) => {
    const { deviceId, shares } = await listScreenShares(db, user, requireString(params, 'id', 'deviceId'));
    return successWith({ shares, viewers: screen.viewers.of(deviceId) });
  }));

  router.post('/Device/Share', handle(async ({ params, user }) =>
    successWith(await createScreenShare(db, user, requireString(params, 'id', 'deviceId'), params.string('user')))));

  router.delete('/Device/Share', handle(async ({ params, user }) => {
    const deviceId = await revokeScreenShare(db, user, requireString(params, 'id', 'deviceId'), requireGuid(params, 'shareId'));
    screen.viewers.endShare(deviceId, requireGuid(params, 'shareId'));
    return success();
  }));

  router.get('/Device/Screenshot', handle(async ({ params, user, res }) => {
    const still = await screen.stills.still(user, requireString(params, 'id', 'deviceId'));
    res.status(200).set({
      'Content-Type': still.contentType, 'Cache-Control': 'private, max-age=2', 'Last-Modified': still.takenAt.toUTCString(),
    }).send(still.image);
    return NO_REPLY;
  }));

  return router;
}
