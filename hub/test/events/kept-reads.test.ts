/**
 * KeptReads against a real PostgreSQL: after `sync()` every write committed before it has been heard (the stamp of
 * the written table changed), strictly with no window and, with a window, for every write older than the window
 * without any query of the caller's own; a cut listening connection, and a stalled one, make `sync()` answer false
 * and nothing be kept until it is back; writes wait the window exactly while another replica is live.
 */
import pg from 'pg';
import { sql } from 'kysely';
import { KeptReads, LISTENER_NAME } from '../../src/events/kept-reads';
import { PING_QUERY } from '../../src/events/freshness-proof';
import { LockKind } from '../../src/fleet/advisory-locks';
import { livePeersQuery } from '../../src/fleet/replica-registry';
import { waitFor } from '../support/lab';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let t: TestDatabase;
const started: KeptReads[] = [];

beforeAll(async () => { t = await createTestDatabase(); });
afterAll(async () => {
  for (const kept of started) await kept.stop();
  await t?.drop();
});

async function listening(windowMs = 0, peers?: ReturnType<typeof livePeersQuery>): Promise<KeptReads> {
  const kept = new KeptReads(t.url, undefined, windowMs, peers);
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

/** Runs `during` while every query this process sends passes `watch`: its text and its answer, which `watch` hands on. */
async function watchingQueries(watch: (text: string, answer: unknown) => unknown, during: () => Promise<unknown>): Promise<void> {
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function watched(this: pg.Client, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text ?? '?';
    return watch(text, (query as (...a: unknown[]) => unknown).apply(this, args));
  } as typeof query;
  try {
    await during();
  } finally {
    pg.Client.prototype.query = query;
  }
}

/** The statements this process sends while `during` runs, pings left out. */
async function statementsDuring(during: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  await watchingQueries((text, answer) => {
    if (text !== PING_QUERY && !text.includes('pg_locks')) sent.push(text);
    return answer;
  }, during);
  return sent;
}

test('with a window of 50 ms: a write is heard by every sync() that starts 50 ms after its commit, and almost none sends a query', async () => {
  const kept = await listening(50);
  let queried = 0;
  for (let i = 0; i < 10; i++) {
    const before = kept.stamp(['hub_settings']);
    await writeSetting(`window ${i}`);
    const committed = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 50 - (performance.now() - committed)));
    const sent = await statementsDuring(async () => expect(await kept.sync()).toBe(true));
    // A ping answered late (a loaded machine) lets the proof lapse: that sync sends its own empty query, and nothing else.
    if (sent.length > 0) queried++;
    expect(sent.every((text) => text === '')).toBe(true);
    expect(kept.stamp(['hub_settings'])).not.toBe(before);
  }
  expect(queried).toBeLessThanOrEqual(2);
});

/** The listening backend of this process, stopped (SIGSTOP) while `during` runs: it answers nothing, as if hung. */
async function withListenerStopped(during: () => Promise<void>): Promise<void> {
  const { rows } = await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity
    WHERE application_name = ${`${LISTENER_NAME}-${process.pid}`}`.execute(t.db);
  expect(rows.length).toBe(1);
  process.kill(rows[0].pid, 'SIGSTOP');
  try {
    await during();
  } finally {
    process.kill(rows[0].pid, 'SIGCONT');
  }
}

test('pings stalled: sync() answers false at once, so reads go to the records, until pings are answered again', async () => {
  for (const earlier of started.splice(0)) await earlier.stop(); // one listening backend of this process: this one's
  const kept = await listening(50);
  const before = kept.stamp(['hub_settings']);
  await withListenerStopped(async () => {
    await writeSetting('while stalled');
    await new Promise((resolve) => setTimeout(resolve, 260)); // no ping answered for 250 ms: stalled
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      expect(await kept.sync()).toBe(false);
      // At once: not after a sync's deadline (1 s); the margin is for a loaded machine.
      expect(performance.now() - started).toBeLessThan(200);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  });
  await waitFor(async () => kept.sync(), 5000, 'pings answered again');
  expect(kept.stamp(['hub_settings'])).not.toBe(before);
});

test('writes wait the window while another replica is live, not while this one is alone; a new replica waits its grace', async () => {
  const me = new pg.Client({ connectionString: t.url });
  const other = new pg.Client({ connectionString: t.url });
  await me.connect();
  await other.connect();
  const lock = 'SELECT pg_advisory_lock($1, hashtext($2) & 2147483647)';
  try {
    await me.query(lock, [LockKind.replica, 'replica-me']);
    const kept = new KeptReads(t.url, undefined, 50, livePeersQuery(t.db, 'replica-me'));
    started.push(kept);
    await kept.start();
    const startedAt = performance.now();
    await waitFor(async () => kept.writeSettleMs() === 0, 5000, 'alone known');
    // Seen live only just now: writers of other replicas may not know it yet, so every request syncs.
    expect(await statementsDuring(async () => expect(await kept.sync()).toBe(true))).toEqual(['']);
    await other.query(lock, [LockKind.replica, 'replica-other']);
    await waitFor(async () => kept.writeSettleMs() === 50, 1000, 'the other replica known');
    await waitFor(async () => (await statementsDuring(() => kept.sync())).length === 0, 5000, 'the proof used');
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(700);
  } finally {
    await me.end();
    await other.end();
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

test('pings go out while requests ask for the proof: an idle hub stops, its next request syncs once and they resume', async () => {
  for (const earlier of started.splice(0)) await earlier.stop(); // only this one's pings are counted
  let skipped = 0; // ms the test moves the clock forward instead of sleeping
  const kept = new KeptReads(t.url, undefined, 50, undefined, () => performance.now() + skipped);
  started.push(kept);
  await kept.start();
  expect(await kept.sync()).toBe(true);
  const sent: string[] = [];
  // The clock moves as a ping is answered, so that none is on the wire (it would look six seconds late: lost).
  let skipAtNextAnswer = 0;
  const watch = (text: string, answer: unknown) => {
    sent.push(text);
    if (text !== PING_QUERY) return answer;
    return (answer as Promise<unknown>).then((result) => {
      skipped += skipAtNextAnswer;
      skipAtNextAnswer = 0;
      return result;
    });
  };
  const pingsDuring = async (ms: number) => {
    sent.length = 0;
    await new Promise((resolve) => setTimeout(resolve, ms));
    return sent.filter((text) => text === PING_QUERY).length;
  };
  await watchingQueries(watch, async () => {
    expect(await pingsDuring(200)).toBeGreaterThan(3); // asked just now: pings every 10 ms
    skipAtNextAnswer = 6_000; // nobody asked for six seconds
    await waitFor(async () => skipAtNextAnswer === 0, 5_000, 'a ping answered');
    expect(await pingsDuring(200)).toBe(0);
    sent.length = 0;
    expect(await kept.sync()).toBe(true); // the proof has lapsed: one sync of its own
    expect(sent.filter((text) => text !== PING_QUERY)).toEqual(['']); // pings may resume while it is answered
    expect(await pingsDuring(200)).toBeGreaterThan(3);
    expect(kept.provenNow()).toBe(true);
  });
});
