/**
 * The one fair waiting line for devices: "the first free device matching this filter, waiting up to T", used by
 * the extension retain with `wait=`, by the CLI through it, and by the Appium session queue. First come, first
 * served across hub replicas: each request is a row in PostgreSQL (`device_waiters`), handed a device by the release
 * that frees it (in the release's transaction) or by a pass of `LineServer` (line-server.ts) when a device frees up
 * otherwise, never by polling. What a caller gets is what a retain gives: the device retained for it and its access
 * ticket.
 *
 *  - `ctx` (`WaitingLineContext`): what a retain needs (the store, the gateways to tell, the ticket keys, the API's
 *    clock) and this replica's `LineServer`. The API's dependencies (`ApiDependencies`) are one.
 *  - `user`: the caller as authenticated (`AuthenticatedUser`); it needs DeviceConnect, as a retain does.
 *  - `RetainedDevice`: the device's Guid and its access ticket (the retain's answer).
 */
import { ApiFailure, DeviceFilterError, formatWireDate, parseDeviceFilter, type DeviceAccessTicket, type DeviceFilter } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { requireEntitlement } from '../auth/entitlements';
import type { GatewayDirectory } from '../gateways/gateway-directory';
import type { Db } from '../store/database';
import { releaseDevice, retainDevice, retainedTicket, retainTicket } from './device-actions';
import type { TicketKeys } from './device-ticket';
import { resolveDevice } from './device-queries';
import type { LineServer, Turn } from './line-server';
import { waitTimeoutText } from './waiting-line-texts';
import { assertIdleMinutesAllowed } from './lease-settings';

export interface WaitingLineContext {
  db: Db;
  gateways: GatewayDirectory;
  ticketKeys: TicketKeys;
  clock?: () => Date;
  waitingLine: LineServer;
}

export interface RetainedDevice {
  deviceId: string;
  ticket: DeviceAccessTicket;
}

export interface WaitRequest {
  user: AuthenticatedUser;
  /** Which devices will do; ignored when `deviceId` names one device. */
  filter: DeviceFilter;
  /** One device (Guid, serial or vendor id): wait for that one. */
  deviceId?: string;
  waitMs: number;
  /** Aborted when the client goes away: the request leaves the line at once. */
  signal: AbortSignal;
  purpose: 'retain' | 'automation';
  leaseName?: string;
  idleMinutes?: number;
}

export interface Waiter {
  id: string;
  place: number;
  userId: string;
  userName: string;
  /** The filter as written, or `id=<Guid>` for one device. */
  filter: string;
  purpose: 'retain' | 'automation';
  leaseName?: string;
  /** Wire dates (UTC). */
  since: string;
  deadline: string;
  replicaId: string;
}

/** The longest a request may wait; longer asks are cut to it. */
export const MAX_WAIT_MS = 15 * 60_000;
/** How many requests one user may have waiting at once, and the whole lab. */
export const MAX_WAITING_PER_USER = 100;
export const MAX_WAITING = 5_000;

/** Reads a filter as a request parameter, refusing an unreadable one with the parameter named. */
export function readFilter(text: string | undefined, parameter = 'filter'): DeviceFilter {
  try {
    return parseDeviceFilter(text ?? '');
  } catch (err) {
    if (err instanceof DeviceFilterError) throw new ApiFailure(err.message, 'INVALID_PARAMETER', parameter);
    throw err;
  }
}

/**
 * Waits in line for a device matching `filter` (or `deviceId`), retains it for `user` and answers as a retain. Fails
 * with DEVICE_WAIT_TIMEOUT when none came within `waitMs` (0: only what is free now, after the earlier waiters).
 */
export async function waitForDevice(ctx: WaitingLineContext, request: WaitRequest): Promise<RetainedDevice> {
  const { user } = request;
  requireEntitlement(user, 'DeviceConnect');
  const waitMs = Math.max(0, Math.min(request.waitMs, MAX_WAIT_MS));
  const device = request.deviceId ? await resolveDevice(ctx.db, request.deviceId) : undefined;
  const retainOptions = {
    ticketKeys: ctx.ticketKeys, now: ctx.clock, gateways: ctx.gateways, lease: request.leaseName, idleMinutes: request.idleMinutes,
  };
  // A device the caller holds never frees up for it: that is a repeated retain, answered (or refused) at once.
  if (device && device.retained_by === user.id) {
    return { deviceId: device.id, ticket: await retainDevice(ctx.db, user, device.id, retainOptions) };
  }
  await assertIdleMinutesAllowed(ctx.db, request.idleMinutes);
  await assertRoomInLine(ctx.db, user);
  const now = ctx.clock?.() ?? new Date();
  const line = ctx.waitingLine;
  let place: string | undefined;
  const deadline = Date.now() + waitMs;
  for (;;) {
    request.signal.throwIfAborted();
    const joined = await ctx.db.insertInto('device_waiters').values({
      ...(place ? { place } : {}),
      user_id: user.id, user_name: user.displayName, filter: device ? '' : request.filter.text, device_id: device?.id ?? null,
      filter_terms: device ? null : filterTerms(request.filter),
      purpose: request.purpose, lease_name: request.leaseName ?? null, idle_minutes: request.idleMinutes ?? null,
      replica_id: line.replicaId, deadline: new Date(now.getTime() + waitMs + 1000),
    }).returning(['id', 'place']).executeTakeFirstOrThrow();
    place = joined.place;
    const turn = await awaitTurn(line, joined.id, deadline, request.signal);
    // The row goes whatever happened; a device assigned meanwhile is the answer (or released if the client left).
    const leave = ctx.db.deleteFrom('device_waiters').where('id', '=', joined.id).returning('assigned_device').executeTakeFirst();
    line.unregister(joined.id);
    // The notice of its retain carries what the ticket needs: answered while the row goes.
    const told = turn?.retain?.retained_by === user.id && !request.signal.aborted ? turn : undefined;
    const row = told ? undefined : await leave;
    const deviceId = told?.deviceId ?? row?.assigned_device ?? turn?.deviceId;
    if (!deviceId) {
      request.signal.throwIfAborted();
      throw new ApiFailure(await waitTimeoutText(ctx.db, request.filter, device, waitMs), 'DEVICE_WAIT_TIMEOUT');
    }
    const giveBack = () => releaseDevice(ctx.db, user, deviceId, { now: ctx.clock, gateways: ctx.gateways }).catch(() => undefined);
    try {
      request.signal.throwIfAborted();
      const ticket = told?.retain ? await retainTicket(told.retain, user, retainOptions)
        : await retainedTicket(ctx.db, user, deviceId, retainOptions);
      // The client left while the ticket was made (the gateway's endpoint can take seconds): nobody would get it.
      request.signal.throwIfAborted();
      if (told) void leave.catch(() => undefined);
      return { deviceId, ticket };
    } catch (err) {
      // The row is gone before the request takes its place again.
      await leave.catch(() => undefined);
      if (request.signal.aborted) {
        await giveBack();
        throw err;
      }
      // Gone offline between assignment and hand-over: it goes back, and the request keeps its place.
      await giveBack();
      if (!(err instanceof ApiFailure) || Date.now() >= deadline) throw err;
    }
  }
}

/** The filter as `device_matches_filter` reads it (store/routines/waiting-line.ts): the parsed keys, no text. */
export function filterTerms(filter: DeviceFilter): string {
  const { text: _text, ...terms } = filter;
  return JSON.stringify(terms);
}

/** Resolves with the device assigned to the waiter, or undefined at the deadline or when the signal aborts. */
function awaitTurn(line: LineServer, waiterId: string, deadline: number, signal: AbortSignal): Promise<Turn | undefined> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (turn?: Turn) => {
      done = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      line.unregister(waiterId);
      resolve(turn);
    };
    const onAbort = () => finish();
    let timer: NodeJS.Timeout | undefined;
    signal.addEventListener('abort', onAbort);
    line.register(waiterId, { assigned: (deviceId, retain) => finish({ deviceId, retain }) });
    if (signal.aborted) {
      finish();
      return;
    }
    // The deadline counts from after a first pass of the line that includes this request: `wait=0` gets what is
    // free now (after the earlier waiters), not nothing.
    void line.serveSoon().finally(() => {
      if (!done) timer = setTimeout(() => finish(), Math.max(0, deadline - Date.now()));
    });
  });
}

async function assertRoomInLine(db: Db, user: AuthenticatedUser): Promise<void> {
  const counts = await db.selectFrom('device_waiters')
    .select((eb) => [eb.fn.countAll<string>().as('all'), eb.fn.countAll<string>().filterWhere('user_id', '=', user.id).as('mine')])
    .executeTakeFirstOrThrow();
  if (Number(counts.mine) >= MAX_WAITING_PER_USER) {
    throw new ApiFailure(`You have ${MAX_WAITING_PER_USER} requests waiting already; wait for those first.`, 'DEVICE_WAIT_TIMEOUT');
  }
  if (Number(counts.all) >= MAX_WAITING) {
    throw new ApiFailure(`${MAX_WAITING} requests are waiting for devices already; try again later.`, 'DEVICE_WAIT_TIMEOUT');
  }
}

/** The line as it stands: who waits for what, since when, first come first (no entitlement check: internal). */
export async function listWaiting(ctx: Pick<WaitingLineContext, 'db'>): Promise<Waiter[]> {
  const rows = await ctx.db.selectFrom('device_waiters').selectAll().where('assigned_device', 'is', null).orderBy('place').execute();
  return rows.map((row, index) => ({
    id: row.id, place: index + 1, userId: row.user_id, userName: row.user_name,
    filter: row.device_id ? `id=${row.device_id}` : row.filter, purpose: row.purpose, leaseName: row.lease_name ?? undefined,
    since: formatWireDate(row.since), deadline: formatWireDate(row.deadline), replicaId: row.replica_id,
  }));
}

/** GET /Device/WaitingLine: the line for those who may take devices back from anyone (DeviceReleaseAny). */
export async function listWaitingFor(ctx: Pick<WaitingLineContext, 'db'>, user: AuthenticatedUser): Promise<Waiter[]> {
  requireEntitlement(user, 'DeviceReleaseAny');
  return listWaiting(ctx);
}
