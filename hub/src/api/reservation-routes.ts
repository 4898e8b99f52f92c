/** Extension /Reservation: list, book, change and cancel device bookings (domain/reservations.ts). */
import { Router } from 'express';
import { ApiFailure, success, successWith } from '@devicelab/shared';
import { handle } from '../http/handler';
import { jsonBodyReader } from '../http/json-body';
import {
  createReservation, deleteReservation, listReservations, updateReservation,
} from '../domain/reservations';
import type { ApiDependencies } from './context';
import { reservationChanges } from './reservation-body';
import { operationName, postOperation, requireGuid, unknownAction } from './params';

export function reservationRouter(deps: ApiDependencies): Router {
  const { db } = deps;
  const clock = { now: deps.clock };
  const router = Router();

  router.get('/Reservation', handle(async ({ params, user }) => successWith(await listReservations(db, user, () => ({
    deviceId: params.string('deviceId'), from: params.date('from')?.date, to: params.date('to')?.date,
  }), clock))));

  router.post('/Reservation', handle(async ({ params, user, req, bodyText }) => {
    const op = postOperation(params);
    const changes = reservationChanges(jsonBodyReader(req, bodyText));
    switch (op) {
      case 'verb:add':
        return successWith(await createReservation(db, user, changes, clock));
      case 'verb:update':
      case 'action:update':
        return successWith(await updateReservation(db, user, () => requireGuid(params, 'id'), changes, clock));
      case 'verb:delete':
      case 'action:delete':
        await deleteReservation(db, user, () => requireGuid(params, 'id'), () => params.bool('series') ?? false, clock);
        return success();
      default:
        throw new ApiFailure(unknownAction(operationName(op)));
    }
  }));

  return router;
}
