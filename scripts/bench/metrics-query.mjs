// Metrics query latency: `GET /Device/Metrics`'s domain function (queryDeviceMetrics: device and marker lookup,
// catalog, the query under a database-enforced statement_timeout, the InfluxDB JSON document) for a 3-aggregate
// query over the most recent `session` marker, against the hand-written SQL for the same answer from the same
// inputs (the device's Guid and the marker name), on a `sample` table of BENCH_ROWS (10 million) rows in daily
// partitions, alternating in the same run; every answer is checked against the SQL's. Goal: API / SQL <= 1.2.
//
//   npx tsc -b && node scripts/bench/metrics-query.mjs
//   BENCH_ROWS (10000000) BENCH_DEVICES (50) BENCH_SESSION_MINUTES (60) BENCH_ROUNDS (40)
//   DATABASE_URL (postgres://postgres@127.0.0.1:5432/postgres): a scratch database is created there and dropped.
import { hub, hubDependency, progress, withScratchDatabase } from './metrics-scratch-database.mjs';
import { median, percentile } from './statistics.mjs';

const ROWS = Number(process.env.BENCH_ROWS ?? 10_000_000);
const DEVICES = Number(process.env.BENCH_DEVICES ?? 50);
const SESSION_MINUTES = Number(process.env.BENCH_SESSION_MINUTES ?? 60);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
const FIELDS = ['Used', 'Free', 'Active', 'Inactive', 'Load', 'User Load', 'System Load', 'Bytes In', 'Bytes Out',
  'Bytes In Per Second', 'Bytes Out Per Second', 'Frequency'];

const { PostgresMetricsStore } = hub('metrics/postgres-metrics-store.js');
const { queryDeviceMetrics } = hub('metrics/device-metrics-query.js');
const { markerPeriods, markerQueryPeriod } = hub('metrics/markers.js');
const { parseAggregates } = hub('metrics/query-plan.js');
const { sql } = hubDependency('kysely');
const pg = hubDependency('pg');

await withScratchDatabase('metrics_query', async (db, url) => {
  const devices = [];
  for (let i = 0; i < DEVICES; i++) {
    devices.push(await db.insertInto('devices').values({ vendor_unique_identifier: `bench-${i}`, name: `Bench ${i}`, operating_system: 'Android' })
      .returning(['id', 'vendor_unique_identifier']).executeTakeFirstOrThrow());
  }
  const store = new PostgresMetricsStore(db);
  const perDevice = Math.ceil(ROWS / DEVICES);
  const endMs = Math.floor(Date.now() / 1000) * 1000;
  const startMs = endMs - perDevice * 1000;
  // One row per day through the store: it learns the fields and creates every day's partition.
  for (let t = startMs; t <= endMs + 86_400_000; t += 43_200_000) {
    await store.ingest([{ deviceId: devices[0].id, table: 'sample', timeUs: Math.min(t, endMs) * 1000 - 1,
      values: new Map(FIELDS.map((f) => [f, 0])) }]);
  }
  const catalog = (await store.catalog()).get('sample');
  const columns = FIELDS.map((f) => catalog.find((c) => c.field === f).column);
  progress(`filling metrics.sample: ${DEVICES} devices x ${perDevice} rows (1 Hz), ${FIELDS.length} fields`);
  const fillStarted = Date.now();
  for (const [n, device] of devices.entries()) {
    // Values with a daily wave and noise; generated inside PostgreSQL (this is set-up, not what is measured).
    await sql`INSERT INTO metrics.sample (device_id, time, ${sql.join(columns.map((c) => sql.id(c)))})
      SELECT ${device.id}::uuid, to_timestamp(${startMs / 1000}::float8 + g),
        ${sql.join(columns.map((_, k) => sql`(1e6 * (${k} + 1) * (1.5 + sin(g / 3600.0)) + random() * 1000)`))}
      FROM generate_series(0, ${perDevice - 1}) g`.execute(db);
    if ((n + 1) % 5 === 0 || n + 1 === DEVICES) {
      const elapsed = (Date.now() - fillStarted) / 1000;
      progress(`  ${n + 1}/${DEVICES} devices, ${((n + 1) * perDevice / elapsed / 1000).toFixed(0)}k rows/s`);
    }
  }
  await sql`ANALYZE metrics.sample`.execute(db);
  const total = (await sql`SELECT count(*)::int8 AS n FROM metrics.sample`.execute(db)).rows[0].n;
  progress(`metrics.sample holds ${total} rows`);

  // Sessions of one device: older ones, and the most recent one of SESSION_MINUTES, ended an hour ago.
  const device = devices[7 % DEVICES];
  for (let k = 4; k >= 0; k--) {
    const stop = endMs - 3_600_000 - k * 4 * 3_600_000;
    await sql`INSERT INTO metrics.markers (device_id, name, started_at, stopped_at)
      VALUES (${device.id}::uuid, 'session', ${new Date(stop - SESSION_MINUTES * 60_000).toISOString()}::timestamptz,
        ${new Date(stop).toISOString()}::timestamptz)`.execute(db);
  }
  await sql`ANALYZE metrics.markers`.execute(db);

  const user = { id: '00000000-0000-4000-8000-000000000000', login: 'bench', displayName: 'bench', roles: [], entitlements: new Set(['DeviceList']) };
  const request = { table: 'sample', marker: 'session', fields: 'Used', aggr: 'mean,max,percentile_95' };
  // Both sides get the same inputs: the device's Guid (the SQL needs no device lookup at all, the API path still
  // checks the device exists) and the marker name.
  const viaApi = async () => {
    const document = await queryDeviceMetrics(db, store, user, device.id, request);
    return document.series[0].values[0].slice(1);
  };
  // The store alone: the transaction with statement_timeout and the query, the marker period already known.
  const [latest] = await markerPeriods(db, device.id, 'session', 1, 0);
  const usedField = catalog.find((c) => c.field === 'Used');
  const plan = {
    deviceId: device.id, tables: [{ table: 'sample', fields: [{ name: 'Used', source: usedField }] }],
    aggregates: parseAggregates(request.aggr), periods: [markerQueryPeriod(latest, new Date())], descending: false,
    timeoutMs: 120_000,
  };
  const viaStore = async () => (await store.query(plan))[0].values[0].slice(1);
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const used = sql.id(columns[0]).compile(db).sql;
  const handWritten = `
    SELECT avg(s.${used}) AS mean, max(s.${used}) AS max, percentile_disc(0.95) WITHIN GROUP (ORDER BY s.${used}) AS p95
    FROM metrics.sample s,
      (SELECT started_at, coalesce(stopped_at, now()) AS stopped_at FROM metrics.markers
        WHERE device_id = $1 AND name = $2 ORDER BY started_at DESC LIMIT 1) m
    WHERE s.device_id = $1 AND s.time >= m.started_at AND s.time <= m.stopped_at`;
  const viaSql = async () => {
    const { rows: [row] } = await pool.query(handWritten, [device.id, request.marker]);
    return [row.mean, row.max, row.p95];
  };

  // max and percentile_95 pick stored values: equal exactly; mean is a float sum: equal to 1e-12 relative.
  const checkSame = (which, answer, expected) => {
    const same = answer.length === 3 && answer[1] === expected[1] && answer[2] === expected[2]
      && Math.abs(answer[0] - expected[0]) <= 1e-12 * Math.abs(expected[0]);
    if (!same) throw new Error(`${which} disagrees: ${JSON.stringify(answer)} vs SQL ${JSON.stringify(expected)}`);
  };
  const [a, b, c] = [await viaApi(), await viaSql(), await viaStore()];
  checkSame('the API path', a, b);
  checkSame('the store', c, b);
  // One network round trip, for reading the overheads: the API path, the store and the hand-written SQL make one
  // each (the API path's message: SET LOCAL statement_timeout, the device and marker lookup, the query).
  const roundTrip = async () => pool.query('SELECT 1');
  progress(`both answer mean/max/p95 = ${a.map((v) => v.toFixed(1)).join(' / ')} over a ${SESSION_MINUTES}-minute session; warming up`);
  const paths = { api: viaApi, store: viaStore, sql: viaSql, roundTrip };
  for (let i = 0; i < 5; i++) for (const run of Object.values(paths)) await run();
  const samples = { api: [], store: [], sql: [], roundTrip: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    const order = Object.keys(paths);
    if (round % 2) order.reverse();
    const answers = {};
    for (const which of order) {
      const started = process.hrtime.bigint();
      answers[which] = await paths[which]();
      samples[which].push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    checkSame('the API path', answers.api, answers.sql);
    checkSame('the store', answers.store, answers.sql);
    if (round % 10 === 0) progress(`round ${round}/${ROUNDS}: median API ${median(samples.api).toFixed(2)} ms, SQL ${median(samples.sql).toFixed(2)} ms`);
  }
  await pool.end();

  console.log(`\nMetrics query: mean, max, percentile_95 of Used over the latest ${SESSION_MINUTES}-minute session, ${total} rows in metrics.sample`);
  console.log('| path | median ms | p95 ms | max ms |');
  console.log('|---|---|---|---|');
  for (const [name, list] of [['queryDeviceMetrics (API path)', samples.api], ['store.query (marker known)', samples.store],
    ['hand-written SQL', samples.sql], ['one round trip (SELECT 1)', samples.roundTrip]]) {
    console.log(`| ${name} | ${median(list).toFixed(2)} | ${percentile([...list].sort((a, b) => a - b), 95).toFixed(2)} | ${Math.max(...list).toFixed(2)} |`);
  }
  for (const [name, list] of [['API', samples.api], ['store', samples.store]]) {
    const ratio = median(list.map((v, i) => v / samples.sql[i]));
    console.log(`| ratio ${name}/SQL (median of per-round ratios) | ${ratio.toFixed(2)} | goal <= 1.2: ${ratio <= 1.2 ? 'met' : 'NOT met'} | |`);
  }
});
