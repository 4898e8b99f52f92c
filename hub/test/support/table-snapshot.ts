/**
 * "Changes nothing", checked: every row of the tables a request could change, as sorted JSON, minus the columns
 * the gateway or the clock move by themselves. Take one before and one after; they must be equal.
 */
import type { Db } from '../../src/store/database';

const VOLATILE = new Set(['last_seen_at', 'last_login_at', 'battery_percent', 'battery_status', 'disk_space',
  'disk_space_used', 'properties', 'installed_packages', 'last_connected_at', 'last_disconnected_at', 'readiness_detail']);
const TABLES = ['users', 'roles', 'user_roles', 'user_properties', 'gateways', 'devices', 'applications', 'async_jobs',
  'events', 'hub_settings', 'automation_sessions'] as const;

export async function snapshotTables(db: Db): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const table of TABLES) {
    const rows = await db.selectFrom(table).selectAll().execute() as Record<string, unknown>[];
    out[table] = rows.map((row) => Object.fromEntries(Object.entries(row).filter(([k]) => !VOLATILE.has(k))))
      .map((row) => JSON.stringify(row)).sort();
  }
  return out;
}
