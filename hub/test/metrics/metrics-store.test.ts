/**
 * The PostgreSQL metrics store on a real database: typed wide tables, the catalog of dynamic `sample` fields
 * (columns added on first sight, safe names), daily partitions created as days come, retention dropping whole
 * days, and values that do not fit dropped rather than failing the batch.
 */
import { sql } from 'kysely';
import { columnNameFor } from '../../src/metrics/field-catalog';
import type { FieldValue, MetricsRow, MetricTableName } from '../../src/metrics/metrics-store';
import { PostgresMetricsStore } from '../../src/metrics/postgres-metrics-store';
import { insertDevice } from '../domain/helpers';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let t: TestDatabase;
let store: PostgresMetricsStore;
let deviceId: string;
const NOW = new Date('2026-11-22T12:00:00Z');
const us = (iso: string) => new Date(iso).getTime() * 1000;
const row = (table: MetricTableName, iso: string, values: Record<string, FieldValue>, timeUs = us(iso)): MetricsRow =>
  ({ deviceId, table, timeUs, values: new Map(Object.entries(values)) });

beforeAll(async () => {
  t = await createTestDatabase();
  store = new PostgresMetricsStore(t.db, { retentionDays: 7 });
  deviceId = (await insertDevice(t.db)).id;
});
afterAll(() => t.drop());

const partitions = async (table: string) => (await sql<{ name: string }>`
  SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
  JOIN pg_namespace n ON n.oid = p.relnamespace WHERE n.nspname = 'metrics' AND p.relname = ${table} ORDER BY 1`
  .execute(t.db)).rows.map((r) => r.name);
const sampleColumns = async () => (await sql<{ column_name: string; data_type: string }>`
  SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'metrics' AND table_name = 'sample'
  ORDER BY ordinal_position`.execute(t.db)).rows;

describe('metrics store: ingest', () => {
  it('stores sample rows with spec field names as typed columns added on first sight, microseconds kept', async () => {
    const outcome = await store.ingest([
      row('sample', '2026-11-22T10:00:00Z', { Used: 1000, 'Active (anon)': 50, 'Bytes In Per Second': 12.5 }, us('2026-11-22T10:00:00Z') + 123_456),
      row('sample', '2026-11-22T10:00:01Z', { Used: 1100, 'Janky frames (percent)': 3.5 }),
    ], NOW);
    expect(outcome).toEqual({ stored: 2, outOfWindow: 0, droppedValues: 0 });

    const catalog = (await store.catalog()).get('sample')!;
    expect(catalog.map((f) => [f.field, f.column, f.kind])).toEqual([
      ['Used', 'f_used', 'number'], ['Active (anon)', 'f_active_anon', 'number'],
      ['Bytes In Per Second', 'f_bytes_in_per_second', 'number'], ['Janky frames (percent)', 'f_janky_frames_percent', 'number'],
    ]);
    expect(await sampleColumns()).toEqual(expect.arrayContaining([
      { column_name: 'f_active_anon', data_type: 'double precision' },
    ]));
    const { rows } = await sql<{ t: string; used: number; anon: number | null; janky: number | null }>`
      SELECT to_char(time AT TIME ZONE 'UTC', 'HH24:MI:SS.US') AS t, f_used AS used, f_active_anon AS anon,
        f_janky_frames_percent AS janky FROM metrics.sample ORDER BY time`.execute(t.db);
    expect(rows).toEqual([
      { t: '10:00:00.123456', used: 1000, anon: 50, janky: null },
      { t: '10:00:01.000000', used: 1100, anon: null, janky: 3.5 },
    ]);
  });

  it('stores the fixed tables typed: numbers, text and flags', async () => {
    await store.ingest([
      row('usb_hub', '2026-11-22T10:00:00Z', { voltage: 5.1, amperage: 0.5, usb_state: 'Charge', battery_status: 'Charging' }),
      row('health_check', '2026-11-22T10:00:00Z', { elapsed_seconds: 0.25, is_error: true, failure_reason: 'adb: device offline' }),
      row('log', '2026-11-22T10:00:00Z', { log: "I/ActivityManager: it's \"quoted\", {braces}, NULL" }),
    ], NOW);
    const usb = await sql`SELECT voltage, amperage, usb_state, battery_status, wattage FROM metrics.usb_hub`.execute(t.db);
    expect(usb.rows).toEqual([{ voltage: 5.1, amperage: 0.5, usb_state: 'Charge', battery_status: 'Charging', wattage: null }]);
    const health = await sql`SELECT elapsed_seconds, is_error, failure_reason FROM metrics.health_check`.execute(t.db);
    expect(health.rows).toEqual([{ elapsed_seconds: 0.25, is_error: true, failure_reason: 'adb: device offline' }]);
    const log = await sql`SELECT log FROM metrics.log`.execute(t.db);
    expect(log.rows).toEqual([{ log: "I/ActivityManager: it's \"quoted\", {braces}, NULL" }]);
  });

  it('drops values that do not fit (unknown fixed-table field, text into a number column, bad names) and keeps the rest', async () => {
    const outcome = await store.ingest([
      row('usb_hub', '2026-11-22T11:00:00Z', { voltage: 5, bogus: 1 }),
      row('sample', '2026-11-22T11:00:00Z', { Used: 'lots', 'Bad\nname': 3, Free: 7 }),
    ], NOW);
    expect(outcome).toEqual({ stored: 2, outOfWindow: 0, droppedValues: 3 });
    const { rows } = await sql`SELECT f_used, f_free FROM metrics.sample WHERE time = '2026-11-22T11:00:00Z'`.execute(t.db);
    expect(rows).toEqual([{ f_used: null, f_free: 7 }]);
  });

  it('gives hostile field names safe, unique columns; the name itself is kept only as data in the catalog', async () => {
    const hostile = 'x"; DROP TABLE devices; --';
    await store.ingest([row('sample', '2026-11-22T11:30:00Z', { [hostile]: 1, 'X DROP TABLE devices': 2 })], NOW);
    const catalog = (await store.catalog()).get('sample')!;
    const columns = catalog.filter((f) => f.field.startsWith('x') || f.field.startsWith('X')).map((f) => f.column);
    expect(columns).toEqual(['f_x_drop_table_devices', 'f_x_drop_table_devices_2']);
    expect(await t.db.selectFrom('devices').select('id').execute()).toHaveLength(1);
    expect(columnNameFor('(((', new Set())).toBe('f_field');
  });

  it('creates a partition per UTC day as rows arrive, and refuses rows outside the retention window or too far ahead', async () => {
    const outcome = await store.ingest([
      row('log', '2026-11-21T23:59:59Z', { log: 'yesterday' }),
      row('log', '2026-11-10T00:00:00Z', { log: 'older than 7 days' }),
      row('log', '2026-11-25T00:00:00Z', { log: 'three days ahead' }),
    ], NOW);
    expect(outcome).toMatchObject({ stored: 1, outOfWindow: 2 });
    expect(await partitions('log')).toEqual(['log_p20261121', 'log_p20261122']);
  });
});

describe('metrics store: retention', () => {
  it('prepare creates today and tomorrow; retention drops whole days older than the setting and nothing newer', async () => {
    await store.prepare(NOW);
    expect(await partitions('sample')).toEqual(['sample_p20261122', 'sample_p20261123']);
    // Ten days later with 7 days' retention: 21 and 22 November (and 23) are older than 25 November.
    const later = new Date('2026-12-02T08:00:00Z');
    await store.prepare(later);
    const dropped = await store.applyRetention(7, later);
    expect(dropped.sort()).toEqual([
      'health_check_p20261122', 'health_check_p20261123', 'log_p20261121', 'log_p20261122', 'log_p20261123',
      'sample_p20261122', 'sample_p20261123', 'usb_hub_p20261122', 'usb_hub_p20261123',
    ]);
    expect(await partitions('sample')).toEqual(['sample_p20261202', 'sample_p20261203']);
    expect((await sql`SELECT count(*)::int AS n FROM metrics.sample`.execute(t.db)).rows).toEqual([{ n: 0 }]);
    // A day inside the window survives.
    await store.ingest([row('sample', '2026-11-26T00:00:00Z', { Used: 1 })], later);
    expect(await store.applyRetention(7, later)).toEqual([]);
    expect(await partitions('sample')).toContain('sample_p20261126');
  });

  it('a partition dropped behind its back (another hub, an operator) is created again and the batch stored', async () => {
    const later = new Date('2026-12-02T08:00:00Z');
    await sql`DROP TABLE metrics.sample_p20261202`.execute(t.db);
    const outcome = await store.ingest([row('sample', '2026-12-02T07:00:00Z', { Used: 5 })], later);
    expect(outcome.stored).toBe(1);
    expect(await partitions('sample')).toContain('sample_p20261202');
  });
});
