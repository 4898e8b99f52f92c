/**
 * The session map as relayed commands read it (KeptSessions), against a real PostgreSQL and real kept reads: a session
 * read once is used again without a statement while nothing it is made of was written; a session ended or its
 * device released by another process (another replica) is refused at the next read after a sync; one this process
 * ends is refused at once, before its change notice comes back (a request may skip the sync within an allowed lag);
 * and without a sync nothing kept is used.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createLogger } from '@devicelab/shared';
import { endAutomationSession, type AutomationContext } from '../../src/domain/automation/automation-sessions';
import { KeptSessions } from '../../src/domain/automation/kept-sessions';
import { recordSession } from '../../src/domain/automation/session-map';
import { KeptReads } from '../../src/events/kept-reads';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { createUser, insertDevice } from './helpers';

let t: TestDatabase;
/** Another process's connection: its writes reach this one only through PostgreSQL's notices. */
let other: pg.Client;
const started: KeptReads[] = [];
/** Statements of the session read sent by this process. */
let sessionReads = 0;
const query = pg.Client.prototype.query;

beforeAll(async () => {
  t = await createTestDatabase();
  other = new pg.Client({ connectionString: t.url });
  await other.connect();
  pg.Client.prototype.query = function counted(this: pg.Client, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text;
    if (this !== other && /FROM automation_sessions s JOIN devices d/.test(text ?? '')) sessionReads++;
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
});
afterAll(async () => {
  pg.Client.prototype.query = query;
  for (const kept of started) await kept.stop();
  await other?.end();
  await t?.drop();
});

async function listening(maxLagMs = 0): Promise<KeptReads> {
  const kept = new KeptReads(t.url, undefined, maxLagMs);
  started.push(kept);
  await kept.start();
  expect(await kept.sync()).toBe(true);
  return kept;
}

/** An open session of a new user on a new device retained by it. */
async function openSession() {
  const user = await createUser(t.db, `kept-${randomUUID()}@example.com`);
  const retainId = randomUUID();
  const device = await insertDevice(t.db, { retained_by: user.id, retain_id: retainId });
  const sessionId = randomUUID();
  await recordSession(t.db, {
    sessionId, deviceId: device.id, vendorUniqueIdentifier: device.vendor_unique_identifier, gatewayId: null, userId: user.id,
    retainId, requestId: randomUUID(), at: new Date(), newCommandTimeoutSeconds: 60,
  });
  return { sessionId, deviceId: device.id };
}

/** `find` after the request's sync, as the route does; how many session reads it sent. */
async function find(kept: KeptReads, sessions: KeptSessions, sessionId: string) {
  const before = sessionReads;
  const session = await sessions.find(sessionId, await kept.sync());
  return { session, reads: sessionReads - before };
}

test('read once, then used without a statement while nothing it is made of is written', async () => {
  const kept = await listening();
  const sessions = new KeptSessions(t.db, kept);
  const { sessionId } = await openSession();
  expect(await find(kept, sessions, sessionId)).toMatchObject({ session: { session_id: sessionId, state: 'open' }, reads: 1 });
  for (let i = 0; i < 5; i++) expect(await find(kept, sessions, sessionId)).toMatchObject({ session: { session_id: sessionId }, reads: 0 });
  // Without a sync (kept reads not live, or the sync failed) the records are read.
  expect((await sessions.find(sessionId, false))?.session_id).toBe(sessionId);
  expect(sessionReads).toBeGreaterThan(0);
  // An unknown session is never kept: read every time.
  const unknown = randomUUID();
  expect(await find(kept, sessions, unknown)).toEqual({ session: undefined, reads: 1 });
  expect(await find(kept, sessions, unknown)).toEqual({ session: undefined, reads: 1 });
});

test('ended by another process: the next read after a sync finds it closed, every time', async () => {
  const kept = await listening();
  const sessions = new KeptSessions(t.db, kept);
  for (let i = 0; i < 10; i++) {
    const { sessionId } = await openSession();
    expect((await find(kept, sessions, sessionId)).session?.state).toBe('open');
    expect((await find(kept, sessions, sessionId)).reads).toBe(0);
    await other.query(`UPDATE automation_sessions SET state = 'closed', ended_at = now(), end_reason = 'ended elsewhere' WHERE session_id = $1`, [sessionId]);
    expect(await find(kept, sessions, sessionId)).toEqual({ session: undefined, reads: 1 });
  }
});

test('its device released by another process: the next read after a sync shows the device free', async () => {
  const kept = await listening();
  const sessions = new KeptSessions(t.db, kept);
  const { sessionId, deviceId } = await openSession();
  expect((await find(kept, sessions, sessionId)).session?.device_retained_by).not.toBeNull();
  await other.query('UPDATE devices SET retained_by = NULL, retain_id = NULL WHERE id = $1', [deviceId]);
  expect(await find(kept, sessions, sessionId)).toMatchObject({ session: { device_retained_by: null }, reads: 1 });
});

test('ended by this process: refused at once, before its change notice is heard', async () => {
  // Stamps that hear nothing: what a request sees while the notice of this process's own write is still on its way
  // (it may skip the sync within an allowed lag), so only the ending itself can drop the kept session.
  const sessions = new KeptSessions(t.db, { stamp: () => 'nothing heard since' });
  const ctx = { db: t.db, sessions, clock: () => new Date(), logger: createLogger('test') } as unknown as AutomationContext;
  const { sessionId } = await openSession();
  const session = await sessions.find(sessionId, true);
  const before = sessionReads;
  expect((await sessions.find(sessionId, true))?.state).toBe('open');
  expect(sessionReads).toBe(before);
  // Ended without the gateway (as when it is gone), the session's retain taken for another so that the device's
  // release, which needs the gateways, is not part of this test.
  await endAutomationSession(ctx, { ...session!, retain_id: randomUUID() }, 'ended here', { deleteOnGateway: false });
  expect(await sessions.find(sessionId, true)).toBeUndefined();
});
