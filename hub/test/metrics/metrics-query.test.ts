/**
 * `GET /Device/Metrics` as the domain function, on a real database with real stored rows: every parameter of
 * spec 4.3 and every validation failure of spec 7.4, hostile values, the timeout enforced by PostgreSQL.
 * Expected values are computed here from the rows the test stored.
 */
import { sql } from 'kysely';
import { ApiFailure } from '@devicelab/shared';
import type { AuthenticatedUser } from '../../src/auth/authenticated-user';
import { queryDeviceMetrics } from '../../src/metrics/device-metrics-query';
import { startMarker, stopMarker } from '../../src/metrics/markers';
import type { FieldValue, MetricsSeries, MetricTableName } from '../../src/metrics/metrics-store';
import { PostgresMetricsStore } from '../../src/metrics/postgres-metrics-store';
import type { MetricsRequest } from '../../src/metrics/query-plan';
import { createDatabase } from '../../src/store/database';
import { createUser, insertDevice } from '../domain/helpers';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let t: TestDatabase;
let store: PostgresMetricsStore;
let user: AuthenticatedUser;
let device: { id: string; name: string; vendor_unique_identifier: string };
let other: { id: string };

const BASE = Date.parse('2026-11-22T10:00:00Z');
const at = (second: number) => new Date(BASE + second * 1000);
const iso = (second: number) => at(second).toISOString().replace('.000Z', 'Z');
// Ten samples, one per second: Used 100..109, Active (anon) cycling 1,2,3, CPU Load 10 x i (every other second).
const used = (i: number) => 100 + i;
const anon = (i: number) => (i % 3) + 1;

const query = (request: Partial<MetricsRequest> & { table?: string }, who = user, id = device.vendor_unique_identifier) =>
  queryDeviceMetrics(t.db, store, who, id, { table: 'sample', ...request } as MetricsRequest);
const series = async (request: Partial<MetricsRequest>, who = user) => (await query(request, who)).series;
const failure = async (request: Partial<MetricsRequest>, who = user): Promise<string> => {
  const err = await query(request, who).then(() => undefined, (e: unknown) => e);
  if (!(err instanceof ApiFailure)) throw new Error(`expected an ApiFailure, got ${String(err)}`);
  return err.message;
};

beforeAll(async () => {
  t = await createTestDatabase();
  store = new PostgresMetricsStore(t.db, { retentionDays: 36500 });
  user = await createUser(t.db, 'metrics@lab.test');
  device = await insertDevice(t.db, { name: 'Pixel 7' });
  other = await insertDevice(t.db);
  const row = (id: string, table: MetricTableName, second: number, values: Record<string, FieldValue>) =>
    ({ deviceId: id, table, timeUs: at(second).getTime() * 1000, values: new Map(Object.entries(values)) });
  const rows = [];
  for (let i = 0; i < 10; i++) {
    const values: Record<string, FieldValue> = { Used: used(i), 'Active (anon)': anon(i) };
    if (i % 2 === 0) values.Load = 10 * i;
    rows.push(row(device.id, 'sample', i, values));
    rows.push(row(other.id, 'sample', i, { Used: 999 }));
  }
  rows.push(row(device.id, 'health_check', 2, { elapsed_seconds: 0.5, is_error: false }));
  rows.push(row(device.id, 'health_check', 7, { elapsed_seconds: 1.5, is_error: true, failure_reason: 'timeout' }));
  rows.push(row(device.id, 'log', 3, { log: 'hello, "world"' }));
  await store.ingest(rows, at(0));
});
afterAll(() => t.drop());

describe('metrics query: rows', () => {
  it('start and end select the device\'s rows in time order; without fields every field of the table, device_id first', async () => {
    const [s, ...rest] = await series({ start: at(2), end: at(4) });
    expect(rest).toEqual([]);
    expect(s).toEqual({
      name: 'sample',
      columns: ['time', 'device_id', 'Used', 'Active (anon)', 'Load'],
      values: [2, 3, 4].map((i) => [iso(i), device.id, used(i), anon(i), i % 2 === 0 ? 10 * i : null]),
    });
  });

  it('either bound alone; end is inclusive', async () => {
    expect((await series({ start: at(8) }))[0].values.map((v) => v[0])).toEqual([iso(8), iso(9)]);
    expect((await series({ end: at(1) }))[0].values.map((v) => v[0])).toEqual([iso(0), iso(1)]);
  });

  it('fields picks columns in the order asked; `Group: Name` and any letter case name the same field', async () => {
    const [s] = await series({ start: at(0), end: at(1), fields: 'memory: active (ANON),Memory: Used' });
    expect(s.columns).toEqual(['time', 'Active (anon)', 'Used']);
    expect(s.values).toEqual([[iso(0), anon(0), used(0)], [iso(1), anon(1), used(1)]]);
  });

  it('limit alone is a valid query; offset pages; orderBy time desc reverses', async () => {
    expect((await series({ limit: 3, fields: 'Used' }))[0].values).toEqual([0, 1, 2].map((i) => [iso(i), used(i)]));
    expect((await series({ limit: 2, offset: 3, fields: 'Used' }))[0].values).toEqual([3, 4].map((i) => [iso(i), used(i)]));
    expect((await series({ limit: 2, fields: 'Used', orderBy: 'time desc' }))[0].values).toEqual([9, 8].map((i) => [iso(i), used(i)]));
    expect((await series({ limit: 2, fields: 'Used', orderBy: 'TIME  Asc' }))[0].values).toEqual([0, 1].map((i) => [iso(i), used(i)]));
    expect(await series({ limit: 0, fields: 'Used' })).toEqual([]);
  });

  it('several tables in one query: one series per table, the same columns, null where a table lacks a field', async () => {
    const found = await series({ table: 'sample,health_check', fields: 'Used,elapsed_seconds', start: at(2), end: at(2) });
    expect(found).toEqual([
      { name: 'sample', columns: ['time', 'Used', 'elapsed_seconds'], values: [[iso(2), used(2), null]] },
      { name: 'health_check', columns: ['time', 'Used', 'elapsed_seconds'], values: [[iso(2), null, 0.5]] },
    ]);
    const all = await series({ table: 'log,health_check', start: at(0) });
    expect(all.map((s) => [s.name, s.columns])).toEqual([
      ['log', ['time', 'device_id', 'log']],
      ['health_check', ['time', 'device_id', 'elapsed_seconds', 'is_error', 'failure_reason']],
    ]);
    expect(all[1].values).toEqual([[iso(2), device.id, 0.5, false, null], [iso(7), device.id, 1.5, true, 'timeout']]);
  });

  it('groupBy: one series per value with the value as a tag; limit counts points per series', async () => {
    const found = await series({ fields: 'Used', groupBy: 'Active (anon)', start: at(0) });
    expect(found.map((s) => s.tags)).toEqual([{ 'Active (anon)': '1' }, { 'Active (anon)': '2' }, { 'Active (anon)': '3' }]);
    expect(found[0].values).toEqual([0, 3, 6, 9].map((i) => [iso(i), used(i)]));
    const limited = await series({ fields: 'Used', groupBy: 'Memory: Active (anon)', limit: 1, offset: 1, orderBy: 'time desc' });
    expect(limited.map((s) => s.values)).toEqual([[[iso(6), used(6)]], [[iso(4), used(4)]], [[iso(5), used(5)]]]);
  });
});

describe('metrics query: aggregates', () => {
  const values = [...Array(10).keys()].map(used);
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const stddev = Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / (values.length - 1));

  it('every InfluxQL function, one column per function and field, ordered by function then field', async () => {
    const [s] = await series({
      start: at(0), end: at(9), fields: 'Used,Load',
      aggr: 'count,sum,mean,median,mode,spread,stddev,min,max,first,last,percentile_90',
    });
    expect(s.columns).toEqual(['time',
      'count_Used', 'count_Load', 'sum_Used', 'sum_Load', 'mean_Used', 'mean_Load', 'median_Used', 'median_Load',
      'mode_Used', 'mode_Load', 'spread_Used', 'spread_Load', 'stddev_Used', 'stddev_Load', 'min_Used', 'min_Load',
      'max_Used', 'max_Load', 'first_Used', 'first_Load', 'last_Used', 'last_Load', 'percentile_90_Used', 'percentile_90_Load']);
    const loads = [0, 20, 40, 60, 80];
    const loadMean = 40;
    const loadStd = Math.sqrt(loads.reduce((a, v) => a + (v - loadMean) ** 2, 0) / 4);
    const [time, ...cells] = s.values[0];
    expect(time).toBe(iso(0));
    const expected = [10, 5, 1045, 200, mean, 40, 104.5, 40, 100, 0, 9, 80, stddev, loadStd, 100, 0, 109, 80, 100, 0, 109, 80, 108, 80];
    cells.forEach((cell, i) => expect(cell).toBeCloseTo(expected[i], 9));
  });

  it('mode picks the most frequent value; aggregates ignore nulls; the series time is the period start', async () => {
    const [s] = await series({ start: at(1), fields: 'Active (anon),Load', aggr: 'mode,count' });
    // Seconds 1..9 give anon 2,3,1,2,3,1,2,3,1 and Load 20,40,60,80 (null on odd seconds): ties go to the smallest.
    expect(s.values).toEqual([[iso(1), 1, 20, 9, 4]]);
  });

  it('groupBy with aggregates: one series per group', async () => {
    const found = await series({ fields: 'Used', aggr: 'max', groupBy: 'Active (anon)', start: at(0) });
    expect(found.map((s) => [s.tags, s.values])).toEqual([
      [{ 'Active (anon)': '1' }, [[iso(0), 109]]], [{ 'Active (anon)': '2' }, [[iso(0), 107]]], [{ 'Active (anon)': '3' }, [[iso(0), 108]]],
    ]);
  });

  it('count, first, last and mode work on text and flags; numeric functions refuse them', async () => {
    const [s] = await series({ table: 'health_check', start: at(0), fields: 'is_error,failure_reason', aggr: 'count,last' });
    expect(s.values).toEqual([[iso(0), 2, 1, true, 'timeout']]);
    expect(await failure({ table: 'log', start: at(0), fields: 'log', aggr: 'mean' }))
      .toBe("Function 'mean' needs numeric fields; 'log' of table log holds text.");
  });

  it('a field one of the tables lacks: every function answers null there (count 0), as JSON and as CSV', async () => {
    const functions = 'count,sum,mean,median,mode,spread,stddev,min,max,first,last,percentile_90';
    const found = await series({ table: 'sample,log', start: at(0), fields: 'Used', aggr: functions });
    expect(found.map((s) => s.name)).toEqual(['sample', 'log']);
    expect(found[1].values).toEqual([[iso(0), 0, ...Array(11).fill(null)]]);
    // Text and flag fields too (count, mode, first and last take any kind).
    const text = await series({ table: 'log,sample', start: at(0), fields: 'log', aggr: 'count,mode,first,last' });
    expect(text.map((s) => s.values)).toEqual([[[iso(0), 1, 'hello, "world"', 'hello, "world"', 'hello, "world"']], [[iso(0), 0, null, null, null]]]);
    const flags = await series({ table: 'health_check,sample', start: at(0), fields: 'is_error', aggr: 'count,mode,first,last' });
    expect(flags[1].values).toEqual([[iso(0), 0, null, null, null]]);
    const csv = await query({ table: 'sample,log', start: at(0), fields: 'Used', aggr: 'mean,max', format: 'csv' });
    expect(csv.body).toBe(`name,tags,time,mean_Used,max_Used\r\nsample,,${iso(0)},${mean},109\r\nlog,,${iso(0)},,\r\n`);
  });

  it('no rows in the period: no series', async () => {
    expect(await series({ start: at(100), fields: 'Used', aggr: 'mean' })).toEqual([]);
    expect((await query({ start: at(100), fields: 'Used' })).body).toBe('{"results":[{"statement_id":0}]}');
  });
});

describe('metrics query: markers', () => {
  beforeAll(async () => {
    // Three periods of marker `run` (seconds 0-2, 3-5, 6-9) and one of `other` (4-4).
    for (const [from, to] of [[0, 2], [3, 5], [6, 9]]) {
      await startMarker(t.db, user, device.id, 'run', at(from));
      await stopMarker(t.db, user, device.id, 'run', at(to));
    }
    await startMarker(t.db, user, device.id, 'other', at(4));
    await stopMarker(t.db, user, device.id, 'other', at(4));
  });

  it('marker: the most recent period only, start and end ignored, the marker in the tags', async () => {
    const found = await series({ marker: 'run', fields: 'Used', start: at(0), end: at(1) });
    expect(found).toEqual([{
      name: 'sample', tags: { marker: 'run', markerStart: at(6).toISOString(), markerEnd: at(9).toISOString() },
      columns: ['time', 'Used'], values: [6, 7, 8, 9].map((i) => [iso(i), used(i)]),
    }]);
  });

  it('markerLimit gives several timelines (most recent first); markerOffset skips; limit and offset apply per timeline', async () => {
    const two = await series({ marker: 'run', markerLimit: 2, fields: 'Used' });
    expect(two.map((s) => s.values.map((v) => v[1]))).toEqual([[106, 107, 108, 109], [103, 104, 105]]);
    const skipped = await series({ marker: 'run', markerLimit: 1, markerOffset: 2, fields: 'Used' });
    expect(skipped.map((s) => s.values.map((v) => v[1]))).toEqual([[100, 101, 102]]);
    const paged = await series({ marker: 'run', markerLimit: 3, limit: 1, offset: 1, fields: 'Used' });
    expect(paged.map((s) => s.values.map((v) => v[1]))).toEqual([[107], [104], [101]]);
    const aggregated = await series({ marker: 'run', markerLimit: 3, fields: 'Used', aggr: 'mean' });
    expect(aggregated.map((s) => s.values)).toEqual([[[iso(6), 107.5]], [[iso(3), 104]], [[iso(0), 101]]]);
  });

  it('marker names and device identifiers of any text reach the lookup as data: quotes, backslashes, `$1`, emoji', async () => {
    const name = `it's \\ "q" $1 ; DROP TABLE devices; -- \u{1F4F1} ñ`;
    await startMarker(t.db, user, device.id, name, at(1));
    await stopMarker(t.db, user, device.id, name, at(2));
    const found = await series({ marker: name, fields: 'Used' });
    expect(found).toEqual([expect.objectContaining({ tags: expect.objectContaining({ marker: name }), values: [[iso(1), 101], [iso(2), 102]] })]);
    // The same text as a device identifier names no device; nothing else happened.
    const err = await query({ marker: name }, user, name).then(() => undefined, (e: unknown) => e);
    expect(err).toEqual(new ApiFailure(`Device '${name.trim()}' not found.`));
    expect(await t.db.selectFrom('devices').select('id').execute()).toHaveLength(2);
    // By Guid and by serial number too, as every device path resolves them.
    expect(await series({ marker: name, fields: 'Used' }, user)).toEqual(found);
    expect((await query({ marker: name, fields: 'Used' }, user, device.id)).series).toEqual(found);
  });

  it('a marker name that has no period, or none beyond the offset, is a clear failure', async () => {
    expect(await failure({ marker: 'never' })).toBe("Device 'Pixel 7' has no marker 'never'.");
    expect(await failure({ marker: 'other', markerOffset: 1 })).toBe("Device 'Pixel 7' has no marker 'other' beyond the 1 most recent.");
  });
});

describe('metrics query: documents', () => {
  it('default format is InfluxDB 1.x JSON named metrics-<device name>.json', async () => {
    const document = await query({ start: at(0), end: at(0), fields: 'Used' });
    expect(document.fileName).toBe('metrics-Pixel 7.json');
    expect(JSON.parse(document.body)).toEqual({ results: [{ statement_id: 0, series: [{ name: 'sample', columns: ['time', 'Used'], values: [[iso(0), 100]] }] }] });
    expect((await query({ start: at(0), end: at(0), format: 'xml' })).fileName).toBe('metrics-Pixel 7.json');
  });

  it('csv: name,tags,columns with quoting; the filename gets the extension of the format', async () => {
    const document = await query({ table: 'log,sample', start: at(3), end: at(3), fields: 'log,Used', format: 'CSV', filename: 'run-1.json' });
    expect(document.fileName).toBe('run-1.csv');
    expect(document.body).toBe(`name,tags,time,log,Used\r\nlog,,${iso(3)},"hello, ""world""",\r\nsample,,${iso(3)},,103\r\n`);
    const grouped = await query({ start: at(0), end: at(1), fields: 'Used', groupBy: 'Active (anon)', format: 'csv' });
    expect(grouped.body).toBe(`name,tags,time,Used\r\nsample,Active (anon)=1,${iso(0)},100\r\nsample,Active (anon)=2,${iso(1)},101\r\n`);
  });
});

describe('metrics query: validation (spec 7.4) and hostile values', () => {
  it.each<[string, Partial<MetricsRequest>, string]>([
    ['aggr without fields', { start: at(0), aggr: 'mean' }, "Parameter 'aggr' requires 'fields': name the fields the functions apply to."],
    ['offset without limit', { start: at(0), offset: 2 }, "Parameter 'offset' is allowed only together with 'limit'."],
    ['no limit, marker, start or end', { fields: 'Used' }, "A metrics query needs at least one of 'limit', 'marker', 'start' or 'end'."],
    ['an unknown table', { table: 'sample,users', limit: 1 }, "Unknown metrics table 'users'. Tables: usb_hub, log, health_check, sample."],
    ['an unknown field', { limit: 1, fields: 'Used,Nope' }, "Unknown field 'Nope' in table sample."],
    ['an unknown function', { limit: 1, fields: 'Used', aggr: 'avg' },
      "Unknown aggregate function 'avg'. Functions: count, sum, mean, median, mode, spread, stddev, min, max, first, last, percentile_NN."],
    ['a percentile above 100', { limit: 1, fields: 'Used', aggr: 'percentile_101' }, "Percentile must be between 0 and 100: 'percentile_101'."],
    ['orderBy another field', { limit: 1, orderBy: 'Used' }, "Parameter 'orderBy' supports only 'time', optionally followed by 'asc' or 'desc'."],
    ['groupBy of two fields', { limit: 1, groupBy: 'Used,Load' }, "Parameter 'groupBy' takes one field name."],
    ['markerLimit 0', { marker: 'run', markerLimit: 0 }, "Parameter 'markerLimit' must be 1 or more."],
    ['a negative limit', { limit: -1 }, "Parameter 'limit' must be 0 or more."],
    ['timeout 0', { limit: 1, timeout: 0 }, "Parameter 'timeout' must be 1 or more."],
    ['start after end', { start: at(5), end: at(1) }, "Parameter 'start' must not be later than 'end'."],
  ])('%s', async (_what, request, message) => {
    expect(await failure(request)).toBe(message);
  });

  it.each<[string, Partial<MetricsRequest>, string]>([
    ['fields', { limit: 1, fields: 'Used"; DROP TABLE devices; --' }, 'Unknown field \'Used"; DROP TABLE devices; --\' in table sample.'],
    ['groupBy', { limit: 1, groupBy: '1) OR 1=1 --' }, "Unknown groupBy field '1) OR 1=1 --' in table sample."],
    ['aggr', { limit: 1, fields: 'Used', aggr: 'max(f_used)); DROP TABLE devices; --' },
      "Unknown aggregate function 'max(f_used)); DROP TABLE devices; --'. Functions: count, sum, mean, median, mode, spread, stddev, min, max, first, last, percentile_NN."],
    ['orderBy', { limit: 1, orderBy: 'time; DROP TABLE devices' }, "Parameter 'orderBy' supports only 'time', optionally followed by 'asc' or 'desc'."],
    ['a storage column name', { limit: 1, fields: 'f_used' }, "Unknown field 'f_used' in table sample."],
  ])('hostile %s: a clear failure, nothing run', async (_what, request, message) => {
    expect(await failure(request)).toBe(message);
    expect(await t.db.selectFrom('devices').select('id').execute()).toHaveLength(2);
  });

  it('needs Device list; the entitlement is checked before the device or the parameters', async () => {
    const lister = await createUser(t.db, 'nolist@lab.test', ['DeviceConnect']);
    expect(await failure({ fields: 'Used' }, lister)).toBe('User does not have required entitlement: DeviceList');
    await expect(query({ limit: 1 }, user, 'no-such-device')).rejects.toThrow("Device 'no-such-device' not found.");
  });

  it('timeout is enforced by PostgreSQL: a query held up longer than its timeout fails with a clear text', async () => {
    // Another session holds the table, so the query waits for it; statement_timeout ends the wait after 1 s.
    const blocker = await t.db.connection().execute(async (conn) => {
      await sql`BEGIN`.execute(conn);
      await sql`LOCK TABLE metrics.sample IN ACCESS EXCLUSIVE MODE`.execute(conn);
      const started = Date.now();
      const message = await failure({ limit: 1, fields: 'Used', timeout: 1 });
      const waited = Date.now() - started;
      await sql`ROLLBACK`.execute(conn);
      return { message, waited };
    });
    expect(blocker.message).toBe('The metrics query did not finish within 1 seconds.');
    expect(blocker.waited).toBeGreaterThanOrEqual(900);
    expect(blocker.waited).toBeLessThan(10_000);
  });

  it("the query's timeout holds for its own statements only: the pooled connection keeps the server default", async () => {
    const single = createDatabase(t.url, { maxConnections: 1 });
    try {
      const before = (await sql<{ statement_timeout: string }>`SHOW statement_timeout`.execute(single)).rows[0].statement_timeout;
      const singleStore = new PostgresMetricsStore(single, { retentionDays: 36500 });
      const document = await queryDeviceMetrics(single, singleStore, user, device.id,
        { table: 'sample', fields: 'Used', aggr: 'max', start: at(0), timeout: 7 });
      expect(document.series[0].values[0][1]).toBe(used(9));
      expect((await sql<{ statement_timeout: string }>`SHOW statement_timeout`.execute(single)).rows[0].statement_timeout).toBe(before);
    } finally {
      await single.destroy();
    }
  });
});

export type { MetricsSeries };

describe('metrics query: result size bound (the answer is built in memory)', () => {
  const bounded = (maxQueryRows: number, request: Partial<MetricsRequest>) => queryDeviceMetrics(
    t.db, new PostgresMetricsStore(t.db, { retentionDays: 36500, maxQueryRows }), user, device.vendor_unique_identifier,
    { table: 'sample', ...request } as MetricsRequest);
  const refusal = async (maxQueryRows: number, request: Partial<MetricsRequest>) => {
    const err = await bounded(maxQueryRows, request).then(() => undefined, (e: unknown) => e);
    if (!(err instanceof ApiFailure)) throw new Error(`expected an ApiFailure, got ${String(err)}`);
    return err.message;
  };

  it('answers up to the bound, and fails clearly (never a truncated series) past it', async () => {
    expect((await bounded(10, { start: at(0) })).series[0].values).toHaveLength(10);
    expect(await refusal(9, { start: at(0) })).toBe("The metrics query returns more than 9 rows. Set 'limit', or narrow 'start' and 'end'.");
    expect((await bounded(9, { start: at(0), limit: 9 })).series[0].values).toHaveLength(9);
    expect(await refusal(9, { start: at(0), limit: 10 })).toMatch(/more than 9 rows/);
    expect(await refusal(9, { start: at(0), groupBy: 'Active (anon)' })).toMatch(/more than 9 rows/);
  });

  it('shares the bound among the statements of several tables', async () => {
    // sample has 10 rows in range, health_check 2: with a bound of 20 each table may bring 10.
    const answer = await bounded(20, { table: 'sample,health_check', start: at(0) });
    expect(answer.series.map((s) => [s.name, s.values.length])).toEqual([['sample', 10], ['health_check', 2]]);
    expect(await refusal(18, { table: 'sample,health_check', start: at(0) }))
      .toBe("The metrics query returns too many rows: at most 18 in all, 9 for each of its 2 marker periods and tables. Set 'limit', or narrow 'start' and 'end', 'markerLimit' or 'table'.");
  });
});
