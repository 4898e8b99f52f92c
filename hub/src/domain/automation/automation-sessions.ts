/**
 * An automation session is a retain: creating one claims a device for the user (waiting in the line when none is
 * free; or adopting a matching retain the user holds already), installs the asked-for library app, creates the
 * session on the device's Appium server and records it in the session map. Ending one deletes it on the gateway
 * first and releases the device only once the gateway has answered, so the next session never meets the old one
 * still tearing down; an adopted retain is not released (the user held it before the session and keeps it).
 */
import { randomUUID } from 'node:crypto';
import { ApiFailure, parseGuid, type Logger } from '@devicelab/shared';
import type { AuthenticatedUser } from '../../auth/authenticated-user';
import { requireEntitlement } from '../../auth/entitlements';
import { loadAuthenticatedUser } from '../../auth/users';
import type { GatewayDirectory } from '../../gateways/gateway-directory';
import type { Db } from '../../store/database';
import type { Clock } from '../async-jobs';
import { installApplication } from '../application-commands';
import { releaseDevice } from '../device-actions';
import { callAppium, valueOf, type AppiumAnswer, type AutomationGateways } from './appium-client';
import { gatewaySessionBody, type NewSessionRequest, type SessionCandidate } from './capabilities';
import type { DeviceFilter } from '@devicelab/shared';
import { filterOfCriteria, retainMadeForSession, type ClaimDevice, type ClaimedDevice } from './device-claim';
import type { KeptSessions } from './kept-sessions';
import { beginClosing, closeSession, recordSession, type LiveSession } from './session-map';

export interface AutomationContext {
  db: Db;
  gateways: GatewayDirectory;
  automation: AutomationGateways;
  /** The session map as relayed commands read it (kept between writes). */
  sessions: KeptSessions;
  claim: ClaimDevice;
  parseFilter: (text: string) => DeviceFilter;
  clock: Clock;
  logger: Logger;
}

/** How long the device's Appium server may take to create a session (a first UiAutomator2 start installs its server). */
export const SESSION_CREATE_TIMEOUT_MS = 240_000;
/** How long a session's teardown on the gateway may take before the device is released anyway. */
export const SESSION_DELETE_TIMEOUT_MS = 60_000;

export interface CreatedSession {
  /** Appium's answer, relayed to the client as it is (a failure too). */
  answer: AppiumAnswer;
  sessionId?: string;
  device: ClaimedDevice;
}

/**
 * Creates a session for `user`. `signal` aborts the wait for a device (the client went away); a client gone
 * while the session was being created gets it deleted again and the device back.
 */
export async function createAutomationSession(
  ctx: AutomationContext, user: AuthenticatedUser, request: NewSessionRequest, options: { signal: AbortSignal; requestId?: string },
): Promise<CreatedSession> {
  requireEntitlement(user, 'DeviceConnect');
  const installs = request.app !== undefined && !request.skipInstall;
  if (installs) requireEntitlement(user, 'DeviceApplicationManagement');
  const { candidate, filter } = await chooseCandidate(ctx.db, request.candidates, ctx.parseFilter);
  const appId = installs ? await libraryAppId(ctx.db, request.app!, filter.os) : undefined;
  const device = await ctx.claim(user, filter, request.queueTimeoutMs, options.signal);
  const requestId = options.requestId ?? randomUUID();
  const releaseAgain = async (why: string) => {
    if (!(await retainMadeForSession(ctx.db, device.id))) {
      ctx.logger.info({ device: device.id, requestId, why }, 'automation session not created; the adopted retain stays');
      return;
    }
    ctx.logger.info({ device: device.id, requestId, why }, 'automation session not created; device released');
    await releaseDevice(ctx.db, user, device.id, { now: ctx.clock, gateways: ctx.gateways }).catch((err: unknown) =>
      ctx.logger.warn({ err, device: device.id }, 'could not release the device of a session not created'));
  };
  let answer: AppiumAnswer;
  try {
    if (appId) await installApplication(ctx.db, ctx.gateways, user, appId, device.id);
    const agent = ctx.automation.automationAgent(device.vendorUniqueIdentifier);
    answer = await callAppium(agent, 'POST', '/session', gatewaySessionBody(candidate, device.operatingSystem), {
      timeoutMs: SESSION_CREATE_TIMEOUT_MS, requestId,
    });
  } catch (err) {
    await releaseAgain(err instanceof Error ? err.message : String(err));
    if (err instanceof ApiFailure) throw err;
    throw new ApiFailure(`The device's Appium server could not be reached: ${err instanceof Error ? err.message : String(err)}`, 'AUTOMATION_START_FAILED');
  }
  const sessionId = valueOf(answer)?.sessionId ?? (answer.body as { sessionId?: unknown } | undefined)?.sessionId;
  if (answer.status !== 200 || typeof sessionId !== 'string' || sessionId === '') {
    await releaseAgain(`Appium answered ${answer.status}`);
    return { answer, device };
  }
  const at = ctx.clock();
  await recordSession(ctx.db, {
    sessionId, deviceId: device.id, vendorUniqueIdentifier: device.vendorUniqueIdentifier, gatewayId: device.gatewayId,
    userId: user.id, retainId: device.retainId, requestId, at, newCommandTimeoutSeconds: candidate.newCommandTimeoutSeconds,
  });
  ctx.logger.info({ sessionId, device: device.id, user: user.login, requestId }, 'automation session created');
  return { answer, sessionId, device };
}

/**
 * The first candidate (W3C `firstMatch` order) whose filter some device of the lab matches; the first one when
 * none does (its wait then says that no device matches).
 */
async function chooseCandidate(
  db: Db, candidates: SessionCandidate[], parseFilter: (text: string) => DeviceFilter,
): Promise<{ candidate: SessionCandidate; filter: DeviceFilter }> {
  const filters = [];
  for (const candidate of candidates) filters.push({ candidate, filter: await filterOfCriteria(db, candidate.criteria, parseFilter) });
  if (filters.length === 1) return filters[0];
  const platforms = await db.selectFrom('devices').select('operating_system').distinct().where('deleted', '=', false).execute();
  const present = new Set(platforms.map((row) => row.operating_system));
  return filters.find(({ filter }) => !filter.os || present.has(filter.os)) ?? filters[0];
}

/** A library application by Guid, or by name or package (the newest upload for the platform). */
async function libraryAppId(db: Db, app: string, os: string | undefined): Promise<string> {
  const guid = parseGuid(app);
  let query = db.selectFrom('applications').select('id').orderBy('created_at', 'desc').limit(1);
  query = guid ? query.where('id', '=', guid)
    : query.where((eb) => eb.or([eb('display_name', '=', app), eb('application_identifier', '=', app)]));
  if (os) query = query.where('operating_system', '=', os);
  const row = await query.executeTakeFirst();
  if (!row) throw new ApiFailure(`devicelab:app '${app.slice(0, 100)}' is not in the library${os ? ` for ${os}` : ''}.`, 'INVALID_CAPABILITIES');
  return row.id;
}

/**
 * Ends a session: deletes it on the device's Appium server (unless `deleteOnGateway` is false: the gateway is gone),
 * then closes its row and releases the device if the session's retain still holds it. Only one caller ends a
 * session (the row's `closing` state); the others get undefined. The gateway's answer is returned to relay.
 */
export async function endAutomationSession(
  ctx: AutomationContext, session: LiveSession, reason: string, options: { deleteOnGateway: boolean },
): Promise<AppiumAnswer | undefined> {
  if (!(await beginClosing(ctx.db, session.id, ctx.clock()))) return undefined;
  ctx.sessions.forget(session.session_id);
  let answer: AppiumAnswer | undefined;
  if (options.deleteOnGateway) {
    try {
      answer = await callAppium(ctx.automation.automationAgent(session.vendor_unique_identifier), 'DELETE',
        `/session/${encodeURIComponent(session.session_id)}`, undefined, { timeoutMs: SESSION_DELETE_TIMEOUT_MS });
    } catch (err) {
      ctx.logger.warn({ err, sessionId: session.session_id }, 'automation session delete on the gateway failed');
    }
  }
  await closeSession(ctx.db, session.id, reason, ctx.clock());
  await releaseSessionDevice(ctx, session);
  ctx.logger.info({ sessionId: session.session_id, device: session.device_id, reason }, 'automation session ended');
  return answer;
}

/** Releases the device if the session's own retain still holds it (not one that came after) and was made for it. */
async function releaseSessionDevice(ctx: AutomationContext, session: LiveSession): Promise<void> {
  const device = await ctx.db.selectFrom('devices').select(['retain_id']).where('id', '=', session.device_id).executeTakeFirst();
  if (!device || device.retain_id !== session.retain_id) return;
  if (!(await retainMadeForSession(ctx.db, session.device_id))) return; // adopted: the user's retain stays theirs
  const row = await ctx.db.selectFrom('users').selectAll().where('id', '=', session.user_id).executeTakeFirst();
  if (!row) return;
  const owner = await loadAuthenticatedUser(ctx.db, row);
  await releaseDevice(ctx.db, owner, session.device_id, { now: ctx.clock, gateways: ctx.gateways }).catch((err: unknown) =>
    ctx.logger.warn({ err, device: session.device_id }, 'could not release the device of an ended automation session'));
}
