/**
 * GET /Device/AppiumLog (spec 4.2): the device's automation server output (Appium's JSON lines), kept by its
 * gateway; `currentSessionOnly` keeps the lines of the device's current session, or of its last one when none
 * runs: the lines that carry its session id, and those of its creation (the request id the hub set on it).
 * Extension `GET /Device/AutomationSession`: the open session of a device, for the dashboard and the CLI.
 * Both tell a session's whole id only to its user and administrators (automation/session-signature.ts).
 */
import { formatWireDate, type AutomationSession } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { requireEntitlement } from '../auth/entitlements';
import type { Db } from '../store/database';
import type { AutomationGateways } from './automation/appium-client';
import { currentOrLastSession, openSessionOfDevice } from './automation/session-map';
import { administersSessions, seesSessionId, sessionSignature, withSignatures } from './automation/session-signature';
import { resolveDeviceIdentity } from './device-queries';

export async function readAutomationLog(
  db: Db, automation: Pick<AutomationGateways, 'automationLog'>, user: AuthenticatedUser, identifier: string,
  options: { currentSessionOnly?: boolean } = {},
): Promise<string> {
  requireEntitlement(user, 'DeviceList');
  const { id } = await resolveDeviceIdentity(db, identifier);
  const device = await db.selectFrom('devices').select('vendor_unique_identifier').where('id', '=', id).executeTakeFirstOrThrow();
  let log = '';
  if (!options.currentSessionOnly) log = await automation.automationLog(device.vendor_unique_identifier, {});
  else {
    const session = await currentOrLastSession(db, id);
    if (session) log = await automation.automationLog(device.vendor_unique_identifier, { sessionId: session.session_id, requestId: session.request_id });
  }
  return withSignatures(log, await sessionIdsHiddenFrom(db, user, id));
}

/** The ids of the device's sessions that `user` may not learn whole (someone else's, unless an administrator). */
async function sessionIdsHiddenFrom(db: Db, user: AuthenticatedUser, deviceId: string): Promise<string[]> {
  if (administersSessions(user)) return [];
  const rows = await db.selectFrom('automation_sessions').select('session_id')
    .where('device_id', '=', deviceId).where('user_id', '<>', user.id).execute();
  return rows.map((row) => row.session_id);
}

/** The device's open automation session, or undefined. */
export async function readAutomationSession(
  db: Db, user: AuthenticatedUser, identifier: string,
): Promise<AutomationSession | undefined> {
  requireEntitlement(user, 'DeviceList');
  const { id } = await resolveDeviceIdentity(db, identifier);
  const session = await openSessionOfDevice(db, id);
  if (!session) return undefined;
  return {
    ...(seesSessionId(user, session.user_id) ? { sessionId: session.session_id } : {}),
    sessionSignature: sessionSignature(session.session_id), userName: session.user_login, startTime: formatWireDate(session.created_at),
    lastCommandTime: formatWireDate(session.last_command_at), newCommandTimeout: session.new_command_timeout_s,
  };
}
