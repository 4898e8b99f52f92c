/**
 * Metrics markers (spec 3, 4.3): named periods of one device. Several may be open at once if their names
 * differ; stopping needs the same name and device. The `session` marker covers each retained period: it is
 * opened and closed by retain/release in their own statements (`retain_device`, `release_device` in
 * store/routines/device-retain.ts), so users cannot start or stop it themselves.
 */
import { sql, type RawBuilder } from 'kysely';
import { ApiFailure } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { deviceNotFound, identifierMatch, resolveDevice, selectDeviceIdentity, type DeviceIdentity } from '../domain/device-queries';
import { countLiteral, hexTextLiteral, LITERAL_TEXT, timestampLiteral } from './sql-literals';
import { requireEntitlement } from '../auth/entitlements';
import { isUniqueViolation, type Db, type Tx } from '../store/database';
import type { QueryPeriod } from './metrics-store';

const SESSION_MARKER = 'session';
/** Longest marker name; the spec sets no character restrictions, only a length keeps rows sane. */
const MAX_MARKER_NAME_LENGTH = 256;

export interface MarkerPeriod {
  name: string;
  startedAt: Date;
  /** Undefined while the marker is open. */
  stoppedAt?: Date;
}

export async function startMarker(db: Db, user: AuthenticatedUser, identifier: string, name: string, now = new Date()): Promise<void> {
  requireEntitlement(user, 'DeviceList');
  checkName(name);
  const device = await resolveDevice(db, identifier);
  try {
    await sql`INSERT INTO metrics.markers (device_id, name, started_at, started_by)
      VALUES (${device.id}::uuid, ${name}, ${now.toISOString()}::timestamptz, ${user.id}::uuid)`.execute(db);
  } catch (err) {
    if (isUniqueViolation(err)) throw new ApiFailure(`Marker '${name}' is already started on device '${device.name}'.`);
    throw err;
  }
}

export async function stopMarker(db: Db, user: AuthenticatedUser, identifier: string, name: string, now = new Date()): Promise<void> {
  requireEntitlement(user, 'DeviceList');
  checkName(name);
  const device = await resolveDevice(db, identifier);
  const { rows } = await sql`UPDATE metrics.markers SET stopped_at = greatest(started_at, ${now.toISOString()}::timestamptz)
    WHERE device_id = ${device.id}::uuid AND name = ${name} AND stopped_at IS NULL RETURNING id`.execute(db);
  if (rows.length === 0) throw new ApiFailure(`Marker '${name}' is not started on device '${device.name}'.`);
}

function checkName(name: string): void {
  if (name.length > MAX_MARKER_NAME_LENGTH) throw new ApiFailure(`Marker names are at most ${MAX_MARKER_NAME_LENGTH} characters.`);
  if (name === SESSION_MARKER) {
    throw new ApiFailure(`The marker '${SESSION_MARKER}' is started and stopped by retain and release.`);
  }
}

/** The `limit` most recent periods of marker `name`, skipping `offset`, most recent first. */
export async function markerPeriods(db: Db | Tx, deviceId: string, name: string, limit: number, offset: number): Promise<MarkerPeriod[]> {
  const { rows } = await sql<{ name: string; started_at: Date; stopped_at: Date | null }>`
    SELECT name, started_at, stopped_at FROM metrics.markers WHERE device_id = ${deviceId}::uuid AND name = ${name}
    ORDER BY started_at DESC, id LIMIT ${limit} OFFSET ${offset}`.execute(db);
  return rows.map((row) => ({ name: row.name, startedAt: row.started_at, stoppedAt: row.stopped_at ?? undefined }));
}

/**
 * The device an identifier names (spec 2.1, as resolveDeviceIdentity) with the `limit` most recent periods of its
 * marker `name` after skipping `offset` (as markerPeriods), in one statement: a metrics query by marker needs both,
 * and each round trip counts against the query's latency.
 */
export async function deviceMarkerPeriods(
  db: Db, identifier: string, name: string, limit: number, offset: number,
): Promise<{ device: DeviceIdentity; periods: MarkerPeriod[] }> {
  const { rows } = await sql<{ id: string; device_name: string; name: string | null; started_at: Date | null; stopped_at: Date | null }>`
    WITH device AS ${selectDeviceIdentity(db, identifier)}
    SELECT device.id, device.name AS device_name, m.name, m.started_at, m.stopped_at FROM device
    LEFT JOIN LATERAL (SELECT id, name, started_at, stopped_at FROM metrics.markers WHERE device_id = device.id AND name = ${name}
      ORDER BY started_at DESC, id LIMIT ${limit} OFFSET ${offset}) m ON true
    ORDER BY m.started_at DESC, m.id`.execute(db);
  if (rows.length === 0) throw new ApiFailure(deviceNotFound(identifier.trim()), 'DEVICE_NOT_FOUND');
  const periods = rows.filter((row) => row.started_at !== null)
    .map((row) => ({ name: row.name!, startedAt: row.started_at!, stoppedAt: row.stopped_at ?? undefined }));
  return { device: { id: rows[0].id, name: rows[0].device_name }, periods };
}

/** Custom settings through which the one-message lookup hands the device and period to the statements after it. */
export const LOOKUP_SETTINGS = { device: 'devicelab.metrics_device', start: 'devicelab.metrics_start', end: 'devicelab.metrics_end' } as const;

/**
 * deviceMarkerPeriods for one period, as a statement rendered for a one-message batch (request text as hex digits
 * only, LITERAL_TEXT): the device's id and name and, with `marker`, its period `offset` back (start, stop). It also
 * sets LOOKUP_SETTINGS for the rest of the transaction (the device; with `marker`, its period, an open one ending at
 * `now`); they stay empty when nothing was found.
 */
export function deviceLookupStatement(identifier: string, marker: { name: string; offset: number } | undefined, now: Date): RawBuilder<LookupRow> {
  const match = identifierMatch(identifier, LITERAL_TEXT);
  const device = sql`SELECT devices.id, devices.name FROM devices WHERE ${match.where} ORDER BY ${match.preference} LIMIT 1`;
  const setting = (name: string, value: RawBuilder<unknown>) => sql`set_config(${sql.lit(name)}, ${value}, true)`;
  if (!marker) {
    return sql<LookupRow>`SELECT d.id, d.name, ${setting(LOOKUP_SETTINGS.device, sql`d.id::text`)} FROM (${device}) d`;
  }
  return sql<LookupRow>`SELECT d.id, d.name, m.started_at, m.stopped_at,
      ${setting(LOOKUP_SETTINGS.device, sql`d.id::text`)},
      ${setting(LOOKUP_SETTINGS.start, sql`coalesce(m.started_at::text, '')`)},
      ${setting(LOOKUP_SETTINGS.end, sql`coalesce(coalesce(m.stopped_at, ${timestampLiteral(now)})::text, '')`)}
    FROM (${device}) d LEFT JOIN LATERAL (SELECT id, started_at, stopped_at FROM metrics.markers
      WHERE device_id = d.id AND name = ${hexTextLiteral(marker.name)}
      ORDER BY started_at DESC, id LIMIT 1 OFFSET ${countLiteral(marker.offset)}) m ON true`;
}

export interface LookupRow {
  id: string;
  name: string;
  started_at?: Date | null;
  stopped_at?: Date | null;
}

/** A marker period as a query period: open markers run to `now`; the series carry the marker in their tags. */
export function markerQueryPeriod(period: MarkerPeriod, now: Date): QueryPeriod {
  const tags: Record<string, string> = { marker: period.name, markerStart: period.startedAt.toISOString() };
  if (period.stoppedAt) tags.markerEnd = period.stoppedAt.toISOString();
  return { start: period.startedAt, end: period.stoppedAt ?? now, tags };
}
