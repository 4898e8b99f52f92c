/**
 * The change feed against real PostgreSQL. Feed positions come from an identity column, taken when a change is
 * written, but NOTIFY arrives at commit: a transaction that took position N and commits after one that took N+1
 * is heard second. Both changes must reach subscribers (a high-water mark would drop the first as "already seen").
 */
import { createLogger } from '@devicelab/shared';
import pg from 'pg';
import { ChangeFeed, type Change } from '../../src/events/change-feed';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { waitFor } from '../support/lab';

let t: TestDatabase;
let feed: ChangeFeed;

beforeAll(async () => {
  t = await createTestDatabase();
  feed = new ChangeFeed(t.db, t.url, createLogger('change-feed-test', 'silent'));
  await feed.start();
});
afterAll(async () => {
  await feed?.stop();
  await t?.drop();
});

test('a change committed after a later-numbered one is still delivered, and each change once', async () => {
  const heard: Change[] = [];
  const unsubscribe = feed.subscribe((change) => heard.push(change));
  const slow = new pg.Client({ connectionString: t.url });
  const quick = new pg.Client({ connectionString: t.url });
  await Promise.all([slow.connect(), quick.connect()]);
  try {
    await slow.query('BEGIN');
    await slow.query(`SELECT note_change('device', 'slow-writer')`); // takes position N, commits last
    await quick.query(`SELECT note_change('device', 'quick-writer')`); // takes N+1, commits first
    await waitFor(async () => heard.some((c) => c.objectId === 'quick-writer'), 10_000, 'the quick change');
    await slow.query('COMMIT');
    await waitFor(async () => heard.some((c) => c.objectId === 'slow-writer'), 10_000, 'the slow change');
    const slowSeq = BigInt(heard.find((c) => c.objectId === 'slow-writer')!.seq);
    expect(slowSeq).toBeLessThan(BigInt(heard.find((c) => c.objectId === 'quick-writer')!.seq));
    expect(heard.map((c) => c.objectId).sort()).toEqual(['quick-writer', 'slow-writer']);
  } finally {
    unsubscribe();
    await Promise.all([slow.end(), quick.end()]);
  }
});
