/**
 * Relayed WebDriver commands read their session kept in memory between writes, and an ended session is still refused
 * at its next command: against a whole lab with the real Appium server on the gateway and one simulated Android
 * device. Commands send no read of the session map while nothing it is made of was written (only the shared sync);
 * a session another process (another replica) marks as being deleted, then open again, is answered accordingly at
 * the very next command; a release by an admin through this hub ends it at the next command.
 */
import pg from 'pg';
import { startTestLab, waitFor, type TestLab } from '../support/lab';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

jest.setTimeout(300_000);

let t: TestDatabase;
let lab: TestLab;
let tester: { login: string; token: string };
/** Another process's connection to the records: its writes reach the hub only through PostgreSQL's notices. */
let other: pg.Client;
/** Statements this process sent, by kind. */
const sent = { sessionReads: 0, commandTimes: 0 };
const query = pg.Client.prototype.query;

beforeAll(async () => {
  t = await createTestDatabase({ maxConnections: 1 });
  lab = await startTestLab({ androidCount: 1, databaseUrl: t.url });
  tester = await lab.addUser('kept-tester@example.com', ['Tester']);
  other = new pg.Client({ connectionString: t.url });
  await other.connect();
  pg.Client.prototype.query = function counted(this: pg.Client, ...args: unknown[]) {
    const text = (typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text) ?? '';
    if (this === other) return (query as (...a: unknown[]) => unknown).apply(this, args);
    if (/FROM automation_sessions s JOIN devices d/.test(text)) sent.sessionReads++;
    if (/UPDATE automation_sessions s SET last_command_at/.test(text)) sent.commandTimes++;
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
}, 120_000);
afterAll(async () => {
  pg.Client.prototype.query = query;
  await other?.end().catch(() => undefined);
  await lab?.stop();
  await t?.drop();
}, 60_000);

const basic = (who: { login: string; token: string }) => `Basic ${Buffer.from(`${who.login}:${who.token}`).toString('base64')}`;

async function newSession(): Promise<string> {
  const res = await fetch(`${lab.hub.url}/Appium/session`, {
    method: 'POST', headers: { authorization: basic(tester), 'content-type': 'application/json' },
    body: JSON.stringify({ capabilities: { alwaysMatch: { platformName: 'Android' }, firstMatch: [{}] } }),
  });
  const body = await res.json() as { value: { sessionId: string } };
  expect(res.status).toBe(200);
  return body.value.sessionId;
}

/** A command without credentials, as webdriverio sends them. */
async function command(sessionId: string) {
  const res = await fetch(`${lab.hub.url}/Appium/session/${sessionId}/window/rect`);
  return { status: res.status, value: ((await res.json()) as { value: { error?: string; message?: string; width?: number } }).value };
}

const retainer = async () => (await lab.hub.db.selectFrom('devices').select('retained_by').executeTakeFirstOrThrow()).retained_by;

test('commands read the session map once and then only after writes; another process\'s change counts at the next command; an admin\'s release too', async () => {
  const sessionId = await newSession();
  expect((await command(sessionId)).status).toBe(200);

  const before = { ...sent };
  const commands = 40;
  for (let i = 0; i < commands; i++) expect(await command(sessionId)).toMatchObject({ status: 200, value: { width: 1080 } });
  const reads = sent.sessionReads - before.sessionReads;
  // A read per write heard at most (the last-command times are written every 500 ms while commands run), a few spare
  // for other writes to devices; far from one per command.
  expect(reads).toBeLessThanOrEqual(sent.commandTimes - before.commandTimes + 3);
  expect(reads).toBeLessThan(commands / 2);

  // Another replica begins to delete it: the next command here hears it. Back to open (as if that failed): served again.
  await other.query(`UPDATE automation_sessions SET state = 'closing' WHERE session_id = $1`, [sessionId]);
  expect(await command(sessionId)).toMatchObject({ status: 404, value: { error: 'invalid session id', message: expect.stringMatching(/is being deleted/) } });
  await other.query(`UPDATE automation_sessions SET state = 'open' WHERE session_id = $1`, [sessionId]);
  expect((await command(sessionId)).status).toBe(200);

  // A release by an admin through this hub: the next command is refused, and the session ends.
  const release = await lab.api(lab.admin, `/Device?action=release&id=${lab.devices[0].serial}`, { method: 'POST' });
  expect(await release.json()).toEqual({ isSuccess: true });
  expect(await command(sessionId)).toMatchObject({ status: 404, value: { error: 'invalid session id', message: expect.stringMatching(/was released \(by an administrator/) } });
  await waitFor(async () => (await lab.hub.db.selectFrom('automation_sessions').select('state').where('session_id', '=', sessionId)
    .executeTakeFirstOrThrow()).state === 'closed', 30_000, 'the session row closed');
  expect(await retainer()).toBeNull();
});
