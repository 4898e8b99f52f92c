/**
 * KeptReads against a real PostgreSQL: after `sync()` every write committed before it has been heard (the stamp of
 * the written table changed), strictly by default and, with a lag allowed, for every write older than the lag; a
 * cut listening connection makes `sync()` answer false and nothing be kept until it is back.
 */
import pg from 'pg';
import { sql } from 'kysely';
import { KeptReads, LISTENER_NAME } from '../../src/events/kept-reads';
import { waitFor } from '../support/lab';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let t: TestDatabase;
const started: KeptReads[] = [];

beforeAll(async () => { t = await createTestDatabase(); });
afterAll(async () => {
  for (const kept of started) await kept.stop();
  await t?.drop();
});

async function listening(maxLagMs = 0): Promise<KeptReads> {
  const kept = new KeptReads(t.url, undefined, maxLagMs);
  started.push(kept);
  await kept.start();
  expect(await kept.sync()).toBe(true);
  return kept;
}

const writeSetting = (value: string) => sql`INSERT INTO hub_settings (key, value) VALUES ('kept-reads-test', ${value})
  ON CONFLICT (key) DO UPDATE SET value = excluded.value`.execute(t.db);

test('strict: a write committed before sync() is heard once it resolves, every time', async () => {
  const kept = await listening();
  for (let i = 0; i < 30; i++) {
    const before = kept.stamp(['hub_settings']);
    await writeSetting(`strict ${i}`);
    expect(await kept.sync()).toBe(true);
    expect(kept.stamp(['hub_settings'])).not.toBe(before);
  }
  // A table nobody wrote keeps its stamp; a kept value under it is used again.
  const loads: number[] = [];
  const load = async () => { loads.push(1); return loads.length; };
  expect(await kept.kept('k', load, { tables: ['roles'] })).toBe(1);
  await writeSetting('unrelated');
  expect(await kept.sync()).toBe(true);
  expect(await kept.kept('k', load, { tables: ['roles'] })).toBe(1);
  expect(await kept.kept('k2', load)).toBe(2);
  await writeSetting('related to every table');
  expect(await kept.sync()).toBe(true);
  expect(await kept.kept('k2', load)).toBe(3);
});

test('with a lag of 50 ms: a write is heard by every sync() that starts 50 ms after its commit', async () => {
  const kept = await listening(50);
  for (let i = 0; i < 10; i++) {
    const before = kept.stamp(['hub_settings']);
    await writeSetting(`lagged ${i}`);
    const committed = performance.now();
    // Requests meanwhile keep the horizon fresh (a sync in the background once it is a third of the lag old).
    while (performance.now() - committed <= 50) {
      await kept.sync();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await kept.sync()).toBe(true);
    expect(kept.stamp(['hub_settings'])).not.toBe(before);
  }
});

test('a cut listening connection: sync() answers false and nothing is kept, until it listens again', async () => {
  const kept = await listening();
  const admin = new pg.Client({ connectionString: t.url });
  await admin.connect();
  try {
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [`${LISTENER_NAME}-${process.pid}`]);
    await waitFor(async () => !kept.live, 5000, 'the cut seen');
    expect(await kept.sync()).toBe(false);
    expect(kept.stamp()).toBeUndefined();
    let loads = 0;
    const load = async () => ++loads;
    await kept.kept('k', load);
    await kept.kept('k', load);
    expect(loads).toBe(2);
    await waitFor(async () => kept.live, 10_000, 'listening again');
    expect(await kept.sync()).toBe(true);
  } finally {
    await admin.end();
  }
});
