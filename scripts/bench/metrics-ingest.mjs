// Metrics ingest rate: the hub's PostgreSQL MetricsStore (`store.ingest`, what every gateway batch goes through)
// against a hand-written batched insert (`INSERT ... SELECT FROM unnest(...)` with a fixed column list, no catalog,
// no partition checks) of the same rows into an identically shaped table (same columns, same daily partitions, same
// (device_id, time) index) in the same PostgreSQL, in alternating rounds. Goal: store / raw >= 0.8.
// Also the exactly-once path a gateway batch with an epoch takes: the batch recorded (metrics.received_batches) and
// its rows written in one transaction (`store.ingest(rows, now, claimBatch(...))`).
//
//   npx tsc -b && node scripts/bench/metrics-ingest.mjs
//   BENCH_DEVICES (50) BENCH_BATCH_ROWS (500, the gateway's batch) BENCH_ROUND_ROWS (20000) BENCH_ROUNDS (9)
//   DATABASE_URL (postgres://postgres@127.0.0.1:5432/postgres): a scratch database is created there and dropped.
import { SAMPLE_FIELDS } from './metrics-fields.mjs';
import { hub, hubDependency, progress, withScratchDatabase } from './metrics-scratch-database.mjs';
import { median } from './statistics.mjs';

const DEVICES = Number(process.env.BENCH_DEVICES ?? 50);
const BATCH = Number(process.env.BENCH_BATCH_ROWS ?? 500);
const ROUND_ROWS = Number(process.env.BENCH_ROUND_ROWS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);

const { PostgresMetricsStore } = hub('metrics/postgres-metrics-store.js');
const { microsToTimestamp } = hub('metrics/metric-time.js');
const { claimBatch } = hub('metrics/received-batches.js');
const { registerGateway } = hub('gateways/gateway-tokens.js');
const { sql } = hubDependency('kysely');
const pg = hubDependency('pg');

let clock = (Date.now() - 3_600_000) * 1000; // rows of the last hour, 1 µs apart
function makeBatches(deviceIds, rows) {
  const batches = [];
  for (let done = 0; done < rows; done += BATCH) {
    const batch = [];
    for (let i = 0; i < Math.min(BATCH, rows - done); i++) {
      const values = new Map(SAMPLE_FIELDS.map((field, k) => [field, Math.random() * 1e9 + k]));
      batch.push({ deviceId: deviceIds[(done + i) % deviceIds.length], table: 'sample', timeUs: (clock += 1), values });
    }
    batches.push(batch);
  }
  return batches;
}

/** The baseline: what a hand-written ingest would do with the same row objects. */
function rawInsert(pool, columns) {
  const names = ['device_id', 'time', ...columns.map((c) => `"${c.column}"`)].join(', ');
  const casts = ['$1::uuid[]', '$2::timestamptz[]', ...columns.map((_, k) => `$${k + 3}::float8[]`)].join(', ');
  const text = `INSERT INTO raw_sample (${names}) SELECT * FROM unnest(${casts})`;
  return async (batch) => {
    const params = [batch.map((r) => r.deviceId), batch.map((r) => microsToTimestamp(r.timeUs)),
      ...columns.map((c) => batch.map((r) => r.values.get(c.field) ?? null))];
    await pool.query(text, params);
  };
}

await withScratchDatabase('metrics_ingest', async (db, url) => {
  const deviceIds = [];
  for (let i = 0; i < DEVICES; i++) {
    const row = await db.insertInto('devices').values({ vendor_unique_identifier: `bench-${i}`, name: `Bench ${i}`, operating_system: 'Android' })
      .returning('id').executeTakeFirstOrThrow();
    deviceIds.push(row.id);
  }
  const store = new PostgresMetricsStore(db);
  await registerGateway(db, 'bench-gateway');
  const gatewayId = (await db.selectFrom('gateways').select('id').where('name', '=', 'bench-gateway').executeTakeFirstOrThrow()).id;
  let sequence = 0;
  progress(`${DEVICES} devices, ${SAMPLE_FIELDS.length} fields per row, batches of ${BATCH} rows, ${ROUNDS} rounds of ${ROUND_ROWS} rows each way`);
  // Warm-up: the store learns its fields (columns added), both tables get their partitions.
  await store.ingest(makeBatches(deviceIds, BATCH)[0]);
  const columns = (await store.catalog()).get('sample');
  await sql`CREATE TABLE raw_sample (LIKE metrics.sample) PARTITION BY RANGE (time)`.execute(db);
  await sql`CREATE INDEX raw_sample_device_time ON raw_sample (device_id, time)`.execute(db);
  const day = 86_400_000;
  for (let d = -1; d <= 1; d++) {
    const from = new Date((Math.floor(Date.now() / day) + d) * day).toISOString();
    const to = new Date((Math.floor(Date.now() / day) + d + 1) * day).toISOString();
    await sql.raw(`CREATE TABLE raw_sample_${d + 1} PARTITION OF raw_sample FOR VALUES FROM ('${from}') TO ('${to}')`).execute(db);
  }
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const raw = rawInsert(pool, columns);
  await raw(makeBatches(deviceIds, BATCH)[0]);

  const rates = { store: [], raw: [], once: [] };
  const orders = [['store', 'raw', 'once'], ['raw', 'once', 'store'], ['once', 'store', 'raw']];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const which of orders[round % 3]) {
      const batches = makeBatches(deviceIds, ROUND_ROWS);
      const started = process.hrtime.bigint();
      for (const batch of batches) {
        if (which === 'store') await store.ingest(batch);
        else if (which === 'once') await store.ingest(batch, undefined, claimBatch({ gatewayId, epoch: 'bench', sequence: ++sequence }));
        else await raw(batch);
      }
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      rates[which].push(ROUND_ROWS / seconds);
      progress(`round ${round}/${ROUNDS} ${which.padEnd(5)} ${Math.round(ROUND_ROWS / seconds)} rows/s`);
    }
  }
  const counts = (await sql`SELECT (SELECT count(*) FROM metrics.sample)::int AS store, (SELECT count(*) FROM raw_sample)::int AS raw,
    (SELECT count(*) FROM metrics.received_batches)::int AS batches`.execute(db)).rows[0];
  progress(`rows stored: store (both paths) ${counts.store}, raw ${counts.raw}; batches recorded ${counts.batches}`);
  await pool.end();

  const storeRate = median(rates.store);
  const rawRate = median(rates.raw);
  const values = SAMPLE_FIELDS.length;
  console.log('\nMetrics ingest (median of rounds)');
  console.log('| insert | rows/s | values/s |');
  console.log('|---|---|---|');
  console.log(`| MetricsStore.ingest | ${Math.round(storeRate)} | ${Math.round(storeRate * values)} |`);
  const onceRate = median(rates.once);
  console.log(`| MetricsStore.ingest exactly-once (batch recorded, one transaction) | ${Math.round(onceRate)} | ${Math.round(onceRate * values)} |`);
  console.log(`| raw unnest insert | ${Math.round(rawRate)} | ${Math.round(rawRate * values)} |`);
  // Each round ran both inserts back to back: the median of the per-round ratios is robust to a busy machine.
  const ratio = median(rates.store.map((rate, i) => rate / rates.raw[i]));
  console.log(`| ratio store/raw (median of per-round ratios) | ${ratio.toFixed(2)} | goal >= 0.8: ${ratio >= 0.8 ? 'met' : 'NOT met'} |`);
  const onceRatio = median(rates.once.map((rate, i) => rate / rates.raw[i]));
  console.log(`| ratio exactly-once/raw (median of per-round ratios) | ${onceRatio.toFixed(2)} | goal >= 0.8: ${onceRatio >= 0.8 ? 'met' : 'NOT met'} |`);
});
