/**
 * The automation session map in PostgreSQL (migration 033): session id -> device, gateway, user, retain, times.
 * Every relayed command reads its session here (one prepared statement with the device's current state), so any
 * hub replica relays any session and a restart loses none.
 */
import { sql } from 'kysely';
import { runPrepared, type Db } from '../../store/database';

export interface LiveSession {
  id: string;
  session_id: string;
  device_id: string;
  device_name: string;
  vendor_unique_identifier: string;
  user_id: string;
  user_login: string;
  retain_id: string;
  request_id: string;
  created_at: Date;
  last_command_at: Date;
  new_command_timeout_s: number;
  state: 'open' | 'closing' | 'closed';
  /** The device as it is now: who retains it by which retain, whether it is there. */
  device_retained_by: string | null;
  device_retain_id: string | null;
  device_availability: string;
  device_deleted: boolean;
  device_disconnected_at: Date | null;
}

/**
 * How long a device may be offline before its session counts as ended: a hub restart or a gateway's reconnect takes
 * the device Offline for a moment, and its session (the device's Appium server runs on) must survive that.
 */
export const OFFLINE_GRACE_MS = 30_000;

export interface NewSessionRow {
  sessionId: string;
  deviceId: string;
  vendorUniqueIdentifier: string;
  gatewayId: string | null;
  userId: string;
  retainId: string;
  requestId: string;
  at: Date;
  newCommandTimeoutSeconds: number;
}

export async function recordSession(db: Db, row: NewSessionRow): Promise<void> {
  await db.insertInto('automation_sessions').values({
    session_id: row.sessionId, device_id: row.deviceId, vendor_unique_identifier: row.vendorUniqueIdentifier,
    gateway_id: row.gatewayId, user_id: row.userId, retain_id: row.retainId, request_id: row.requestId,
    created_at: row.at, last_command_at: row.at, new_command_timeout_s: row.newCommandTimeoutSeconds,
  }).execute();
}

/** The session with this id that is not closed yet, with its device's current state; undefined if none. */
export async function findLiveSession(db: Db, sessionId: string): Promise<LiveSession | undefined> {
  const rows = await runPrepared<LiveSession>(db, sql`
    SELECT s.id, s.session_id, s.device_id, d.name AS device_name, s.vendor_unique_identifier, s.user_id,
      u.login AS user_login, s.retain_id, s.request_id, s.created_at, s.last_command_at, s.new_command_timeout_s,
      s.state, d.retained_by AS device_retained_by, d.retain_id AS device_retain_id,
      d.availability AS device_availability, d.deleted AS device_deleted, d.last_disconnected_at AS device_disconnected_at
    FROM automation_sessions s JOIN devices d ON d.id = s.device_id JOIN users u ON u.id = s.user_id
    WHERE s.session_id = ${sessionId} AND s.state <> 'closed'`);
  return rows[0];
}

/**
 * Why the session can no longer run though nobody deleted it, or undefined while it stands (also while its device
 * is offline for less than OFFLINE_GRACE_MS: see `offlineSince`).
 */
export function whySessionEnded(session: LiveSession, now: number): string | undefined {
  if (session.device_deleted) return `its device '${session.device_name}' was deleted`;
  if (session.device_retained_by !== session.user_id || session.device_retain_id !== session.retain_id) {
    return `its device '${session.device_name}' was released (by an administrator or its lease ended)`;
  }
  const offline = offlineSince(session);
  if (offline !== undefined && now - offline >= OFFLINE_GRACE_MS) {
    return `its device '${session.device_name}' went offline (unplugged, or its gateway is gone)`;
  }
  return undefined;
}

/** When the session's device went offline (epoch ms; long ago when unknown), or undefined while it is Online. */
export function offlineSince(session: LiveSession): number | undefined {
  if (session.device_availability === 'Online') return undefined;
  return session.device_disconnected_at?.getTime() ?? 0;
}

/**
 * Marks an open session as being torn down; false when someone else did first (one teardown per session, across
 * replicas).
 */
export async function beginClosing(db: Db, id: string, at: Date): Promise<boolean> {
  // The teardown's start is its last activity: a replica that dies mid-teardown leaves it to the sweeper after a while.
  const result = await db.updateTable('automation_sessions').set({ state: 'closing', last_command_at: at })
    .where('id', '=', id).where('state', '=', 'open').executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function closeSession(db: Db, id: string, reason: string, at: Date): Promise<void> {
  await db.updateTable('automation_sessions').set({ state: 'closed', ended_at: at, end_reason: reason })
    .where('id', '=', id).where('state', '<>', 'closed').execute();
}

/** The device's open session, or else its last one: what `AppiumLog?currentSessionOnly=true` shows. */
export async function currentOrLastSession(db: Db, deviceId: string): Promise<{ session_id: string; request_id: string } | undefined> {
  return db.selectFrom('automation_sessions').select(['session_id', 'request_id'])
    .where('device_id', '=', deviceId).orderBy(sql`state <> 'closed'`, 'desc').orderBy('created_at', 'desc')
    .limit(1).executeTakeFirst();
}

/** Open sessions whose idle limit has passed at `now` (limit 0: never). */
export async function idleSessions(db: Db, now: Date): Promise<LiveSession[]> {
  const ids = await db.selectFrom('automation_sessions').select('session_id')
    .where('state', '=', 'open').where('new_command_timeout_s', '>', 0)
    .where(sql<boolean>`last_command_at + make_interval(secs => new_command_timeout_s) < ${now}`)
    .execute();
  const sessions = await Promise.all(ids.map((row) => findLiveSession(db, row.session_id)));
  return sessions.filter((s): s is LiveSession => s !== undefined);
}

/** Open sessions whose device was released, deleted or went offline (past the grace at `now`) without the session's client. */
export async function orphanedSessions(db: Db, now: Date): Promise<LiveSession[]> {
  const ids = await db.selectFrom('automation_sessions as s').innerJoin('devices as d', 'd.id', 's.device_id')
    .select('s.session_id').where('s.state', '=', 'open')
    .where((eb) => eb.or([
      eb('d.deleted', '=', true),
      eb.and([eb('d.availability', '<>', 'Online'), eb.or([
        eb('d.last_disconnected_at', 'is', null),
        eb('d.last_disconnected_at', '<', new Date(now.getTime() - OFFLINE_GRACE_MS)),
      ])]),
      eb('d.retained_by', 'is', null),
      eb('d.retained_by', '<>', eb.ref('s.user_id')),
      eb('d.retain_id', '<>', eb.ref('s.retain_id')),
    ])).execute();
  const sessions = await Promise.all(ids.map((row) => findLiveSession(db, row.session_id)));
  return sessions.filter((s): s is LiveSession => s !== undefined);
}

/** Sessions left `closing` by a replica that died mid-teardown, older than `before`. */
export async function stuckClosings(db: Db, before: Date): Promise<LiveSession[]> {
  const ids = await db.selectFrom('automation_sessions').select('session_id')
    .where('state', '=', 'closing').where('last_command_at', '<', before).execute();
  const sessions = await Promise.all(ids.map((row) => findLiveSession(db, row.session_id)));
  return sessions.filter((s): s is LiveSession => s !== undefined);
}

/** Open sessions, newest first, for the dashboard and `GET /Appium/sessions`. */
export async function openSessionOfDevice(db: Db, deviceId: string) {
  return db.selectFrom('automation_sessions as s').innerJoin('users as u', 'u.id', 's.user_id')
    .select(['s.session_id', 's.user_id', 's.created_at', 's.last_command_at', 's.new_command_timeout_s', 'u.login as user_login'])
    .where('s.device_id', '=', deviceId).where('s.state', '<>', 'closed').executeTakeFirst();
}

/** Why the last session with this id ended, when one did. */
export async function endedSessionReason(db: Db, sessionId: string): Promise<string | undefined> {
  const row = await db.selectFrom('automation_sessions').select('end_reason')
    .where('session_id', '=', sessionId).where('state', '=', 'closed').orderBy('created_at', 'desc').limit(1).executeTakeFirst();
  return row ? (row.end_reason ?? 'it was deleted') : undefined;
}
