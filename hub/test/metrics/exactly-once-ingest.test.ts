/**
 * Exactly-once metrics ingest on a real database, driven through the hub's MetricsReceiver as a gateway
 * session drives it: a batch names itself by (epoch, sequence); a resend of a stored batch (its ack was lost) is
 * acknowledged and stores nothing, while other epochs and gateways are independent. Records of received batches
 * are pruned after a day.
 */
import { sql } from 'kysely';
import type { MetricsBatch } from '@devicelab/proto';
import { createLogger } from '@devicelab/shared';
import { registerGateway } from '../../src/gateways/gateway-tokens';
import { MetricsReceiver } from '../../src/metrics/link-ingest';
import { startMetricsMaintenance } from '../../src/metrics/maintenance';
import { PostgresMetricsStore } from '../../src/metrics/postgres-metrics-store';
import { pruneReceivedBatches } from '../../src/metrics/received-batches';
import { insertDevice } from '../domain/helpers';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let t: TestDatabase;
let store: PostgresMetricsStore;
let deviceId: string;
let gateways: { id: string; name: string }[];
const VUI = 'exactly-once-1';
const logger = createLogger('test', 'silent');
let clock = Date.now() - 60_000;

beforeAll(async () => {
  t = await createTestDatabase();
  store = new PostgresMetricsStore(t.db);
  deviceId = (await insertDevice(t.db, { vendor_unique_identifier: VUI })).id;
  for (const name of ['gw-one', 'gw-two']) await registerGateway(t.db, name);
  gateways = await t.db.selectFrom('gateways').select(['id', 'name']).orderBy('name').execute();
});
afterAll(() => t.drop());

/** A batch of `count` log rows, each text unique, two tables so a batch spans several inserts. */
function batch(epoch: string, sequence: number, texts: string[]): MetricsBatch {
  return {
    epoch, sequence, droppedRows: 0,
    rows: texts.flatMap((text) => [
      { vendorUniqueIdentifier: VUI, table: 'log', timeUs: (clock += 1) * 1000, values: [{ field: 'log', value: 'text', text }] },
      { vendorUniqueIdentifier: VUI, table: 'sample', timeUs: clock * 1000, values: [{ field: 'Used', value: 'number', number: 7 }] },
    ]) as MetricsBatch['rows'],
  };
}
const stored = async (text: string) => Number((await sql<{ n: string }>`
  SELECT count(*) AS n FROM metrics.log WHERE device_id = ${deviceId}::uuid AND log = ${text}`.execute(t.db)).rows[0].n);
const records = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM metrics.received_batches`.execute(t.db)).rows[0].n);

describe('exactly-once metrics ingest', () => {
  it('stores a batch once: its resend (same epoch and sequence) is acknowledged again and stores nothing', async () => {
    const receiver = new MetricsReceiver(t.db, store, gateways[0], logger);
    const first = batch('epoch-a', 1, ['a1 x', 'a1 y']);
    expect(await receiver.receive(first)).toBe(1);
    // The ack was lost; the gateway reconnects (a new session, a new receiver) and resends the batch unchanged.
    const again = new MetricsReceiver(t.db, store, gateways[0], logger);
    expect(await again.receive(first)).toBe(1);
    expect(await again.receive(first)).toBe(1);
    expect([await stored('a1 x'), await stored('a1 y')]).toEqual([1, 1]);
    const samples = await sql<{ n: string }>`SELECT count(*) AS n FROM metrics.sample WHERE device_id = ${deviceId}::uuid
      AND time IN (SELECT time FROM metrics.log WHERE log LIKE 'a1 %')`.execute(t.db);
    expect(Number(samples.rows[0].n)).toBe(2);
  });

  it('a resend racing the original (two sessions of one gateway) is still stored once', async () => {
    const b = batch('epoch-a', 2, ['a2 race']);
    const receivers = [0, 1, 2].map(() => new MetricsReceiver(t.db, store, gateways[0], logger));
    expect(await Promise.all(receivers.map((r) => r.receive(b)))).toEqual([2, 2, 2]);
    expect(await stored('a2 race')).toBe(1);
  });

  it('the same sequence in another epoch (a restarted gateway) or from another gateway is a different batch', async () => {
    await new MetricsReceiver(t.db, store, gateways[0], logger).receive(batch('epoch-b', 1, ['b1']));
    await new MetricsReceiver(t.db, store, gateways[1], logger).receive(batch('epoch-a', 1, ['other gateway']));
    expect(await stored('b1')).toBe(1);
    expect(await stored('other gateway')).toBe(1);
  });

  it('a batch without an epoch (a gateway from before exactly-once) is stored as it comes, every time', async () => {
    const receiver = new MetricsReceiver(t.db, store, gateways[0], logger);
    const legacy = batch('', 1, ['legacy']);
    await receiver.receive(legacy);
    await receiver.receive(legacy);
    expect(await stored('legacy')).toBe(2);
  });

  it('refuses an epoch that is not one of ours: nothing stored or recorded, acknowledged so the uplink moves on', async () => {
    const before = await records();
    const receiver = new MetricsReceiver(t.db, store, gateways[0], logger);
    expect(await receiver.receive(batch('e'.repeat(65), 9, ['long epoch']))).toBe(9);
    expect(await stored('long epoch')).toBe(0);
    expect(await records()).toBe(before);
  });

  it('a write failing half-way rolls back rows and record together; the retried transaction stores both once', async () => {
    const b = batch('epoch-c', 1, ['half way']);
    // The log rows go in first, then the sample rows: their partition is dropped behind the store's back (as
    // another hub's retention would), so the transaction fails after writing the log rows and is retried whole.
    const day = new Date(Number(b.rows[1].timeUs) / 1000).toISOString().slice(0, 10).replace(/-/g, '');
    await sql.raw(`DROP TABLE metrics.sample_p${day}`).execute(t.db);
    const receiver = new MetricsReceiver(t.db, store, gateways[0], logger);
    expect(await receiver.receive(b)).toBe(1);
    expect(await receiver.receive(b)).toBe(1);
    expect(await stored('half way')).toBe(1);
    const samples = await sql<{ n: string }>`SELECT count(*) AS n FROM metrics.sample WHERE time = ${new Date(Number(b.rows[1].timeUs) / 1000).toISOString()}::timestamptz`.execute(t.db);
    expect(Number(samples.rows[0].n)).toBe(1);
    expect(Number((await sql<{ n: string }>`SELECT count(*) AS n FROM metrics.received_batches WHERE epoch = 'epoch-c'`.execute(t.db)).rows[0].n)).toBe(1);
  });

  it('prunes records older than a day, at maintenance', async () => {
    const kept = await records();
    expect(kept).toBeGreaterThan(0);
    expect(await pruneReceivedBatches(t.db, new Date(Date.now() + 3_600_000))).toBe(0);
    expect(await records()).toBe(kept);
    await sql`UPDATE metrics.received_batches SET received_at = now() - interval '25 hours' WHERE epoch = 'epoch-b'`.execute(t.db);
    const stop = await startMetricsMaintenance(store, { retentionDays: 30, logger, db: t.db });
    await stop();
    expect(await records()).toBe(kept - 1);
    expect(await pruneReceivedBatches(t.db, new Date(Date.now() + 25 * 3_600_000))).toBe(kept - 1);
    expect(await records()).toBe(0);
  });
});
