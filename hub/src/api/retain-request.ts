/**
 * `POST /Device?action=retain` as the spec has it (`id=`), and its extensions: `wait=<seconds>` waits in the lab's
 * one waiting line for `id=` or for the first device matching `filter=` (the CLI's filter syntax); `lease=` names the
 * caller's lease; `idleMinutes=` asks for this retain's own idle time. A waiting request leaves the line the moment
 * its client goes away (the connection closes before the answer is written).
 */
import type { Response } from 'express';
import { ApiFailure, type DeviceAccessTicket } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { requireEntitlement } from '../auth/entitlements';
import { releaseDevice, retainDevice } from '../domain/device-actions';
import { MAX_WAIT_MS, readFilter, waitForDevice } from '../domain/waiting-line';
import type { RequestParams } from '../http/params';
import type { ApiDependencies } from './context';
import { onClientGone } from '../http/client-gone';
import { requireString } from './params';

/** The longest lease name taken. */
const MAX_LEASE_NAME = 200;

export async function retainRequest(
  deps: ApiDependencies, res: Response, params: RequestParams, user: AuthenticatedUser,
): Promise<DeviceAccessTicket> {
  // The entitlement before any parameter is read (wire rule 19); the domain checks it again where it does the work.
  requireEntitlement(user, 'DeviceConnect');
  const waitSeconds = waitOf(params);
  const lease = params.string('lease');
  if (lease !== undefined && (lease.length > MAX_LEASE_NAME || /\p{Cc}/u.test(lease))) {
    throw new ApiFailure(`Parameter 'lease' must be at most ${MAX_LEASE_NAME} characters without control characters.`,
      'INVALID_PARAMETER', 'lease');
  }
  const idleMinutes = params.int('idleMinutes');
  const filterText = params.string('filter');
  const id = params.stringOf('id', 'deviceId');
  if (waitSeconds === undefined && filterText === undefined) {
    return retainDevice(deps.db, user, requireString(params, 'id', 'deviceId'),
      { ticketKeys: deps.ticketKeys, now: deps.clock, gateways: deps.gateways, lease, idleMinutes });
  }
  if (id !== undefined && filterText !== undefined) {
    throw new ApiFailure(`Give either 'id' (one device) or 'filter' (any matching device), not both.`, 'INVALID_PARAMETER', 'filter');
  }
  const filter = readFilter(filterText);
  const client = new AbortController();
  // The client went away before its answer: so does its place in line.
  const stopWatching = onClientGone(res, () => client.abort(new Error('client gone')));
  try {
    const { ticket } = await waitForDevice(deps, {
      user, filter, deviceId: id, waitMs: (waitSeconds ?? 0) * 1000, signal: client.signal, purpose: 'retain',
      leaseName: lease, idleMinutes,
    });
    if (client.signal.aborted) {
      // Gone between the hand-over and this answer: the device goes back rather than to nobody.
      await releaseDevice(deps.db, user, ticket.deviceVendorUniqueIdentifier, { now: deps.clock, gateways: deps.gateways })
        .catch(() => undefined);
    }
    return ticket;
  } catch (err) {
    // Nobody reads this answer; a failure Result, not an unexpected error in the log.
    if (client.signal.aborted && !(err instanceof ApiFailure)) throw new ApiFailure('The client went away while waiting for a device.');
    throw err;
  } finally {
    stopWatching();
  }
}

/**
 * `wait=<seconds>` (cut to the line's maximum); a boolean `wait` means what it means everywhere else (rule 9) and is
 * no wait here. Anything else is refused.
 */
function waitOf(params: RequestParams): number | undefined {
  const text = params.string('wait');
  if (text === undefined || /^(true|false|yes|no)$/i.test(text)) return undefined;
  if (!/^\d{1,7}$/.test(text.trim())) {
    throw new ApiFailure(`Parameter 'wait' is a number of seconds to wait for a device (at most ${MAX_WAIT_MS / 1000}).`,
      'INVALID_PARAMETER', 'wait');
  }
  return Math.min(Number(text.trim()), MAX_WAIT_MS / 1000);
}
