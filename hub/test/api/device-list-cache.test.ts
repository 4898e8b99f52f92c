/**
 * The kept device lists (domain/device-list-cache.ts, http/kept-json.ts) against a whole lab: what a poller sees
 * (ETag, 304, gzip) and that a change is visible on the next read, whether this hub made it or another hub
 * replica on the same records (a second connection pool writing to the database). And that the credentials a
 * client verified before stop working at once when the token is rotated or the user disabled.
 */
import { createDatabase, type Db } from '../../src/store/database';
import { startTestLab, type TestLab } from '../support/lab';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let records: TestDatabase;
let lab: TestLab;
/** Another hub replica's writes: its own pool on the same records. */
let replica: Db;
let tester: { login: string; token: string };
let serial: string;

beforeAll(async () => {
  records = await createTestDatabase({ maxConnections: 2 });
  lab = await startTestLab({ androidCount: 1, databaseUrl: records.url });
  replica = createDatabase(records.url, { maxConnections: 2 });
  tester = await lab.addUser('poller@example.com', ['Tester']);
  serial = lab.devices[0].serial;
}, 60_000);
afterAll(async () => {
  await lab.stop();
  await replica.destroy();
  await records.drop();
}, 60_000);

const list = async (query = '', headers: Record<string, string> = {}, as = lab.admin) => {
  const res = await lab.api(as, `/Device${query}`, { headers });
  return { status: res.status, etag: res.headers.get('etag'), encoding: res.headers.get('content-encoding'), text: await res.text() };
};
const ours = (text: string) => (JSON.parse(text) as { serialNumber: string; notes?: string; retainedByUserName?: string;
  retainedByDisplayName?: string }[]).find((d) => d.serialNumber === serial)!;

describe('GET /Device for pollers', () => {
  it('answers the same list with the same ETag, 304 to If-None-Match, and gzip when asked', async () => {
    const first = await list();
    const second = await list();
    expect(first.status).toBe(200);
    expect(first.etag).toMatch(/^W\/".+"$/);
    expect(second).toEqual(first);
    const notModified = await list('', { 'if-none-match': first.etag! });
    expect(notModified.status).toBe(304);
    expect(notModified.text).toBe('');

    const res = await lab.api(lab.admin, '/Device?properties=true', { headers: { 'accept-encoding': 'gzip' } });
    const plain = await list('?properties=true', { 'accept-encoding': 'identity' });
    expect(plain.encoding).toBeNull();
    // fetch decodes gzip itself; the header says it was sent compressed, and the body is the same JSON.
    expect(res.headers.get('content-encoding')).toBe('gzip');
    expect(await res.text()).toBe(plain.text);
    expect(JSON.parse(plain.text)[0].properties.length).toBeGreaterThan(0);
  });

  it('shows a change on the next read, made through this hub or by another replica', async () => {
    const before = await list();
    const updated = await lab.api(lab.admin, `/Device?verb=update&id=${serial}`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ notes: 'through the API' }),
    });
    expect(await updated.text()).toBe('{"isSuccess":true}');
    const afterApi = await list();
    expect(ours(afterApi.text).notes).toBe('through the API');
    expect(afterApi.etag).not.toBe(before.etag);
    expect((await list('', { 'if-none-match': before.etag! })).status).toBe(200);

    await replica.updateTable('devices').set({ notes: 'by another replica' }).where('serial_number', '=', serial).execute();
    expect(ours((await list()).text).notes).toBe('by another replica');
    const available = await lab.api(lab.admin, '/Device/Available');
    expect(ours(await available.text()).notes).toBe('by another replica');
  });

  it('shows a retain, the retainer renamed elsewhere, and the release on the next read', async () => {
    const retained = await lab.api(tester, `/Device?action=retain&id=${serial}`, { method: 'POST' });
    expect((await retained.json() as { isSuccess: boolean }).isSuccess).toBe(true);
    expect(ours((await list()).text).retainedByUserName).toBe('poller@example.com');
    expect(ours(await (await lab.api(lab.admin, '/Device/Available')).text())).toBeUndefined();

    await replica.updateTable('users').set({ first_name: 'Paula' }).where('login', '=', 'poller@example.com').execute();
    expect(ours((await list()).text).retainedByDisplayName).toBe('Paula');

    const released = await lab.api(tester, `/Device?action=release&id=${serial}`, { method: 'POST' });
    expect(await released.text()).toBe('{"isSuccess":true}');
    expect(ours((await list()).text).retainedByUserName).toBeUndefined();
  });
});

describe('credentials verified before', () => {
  it('stop working at once when the token is rotated or the user disabled', async () => {
    const user = await lab.addUser('rotated@example.com', ['Tester']);
    expect((await list('', {}, user)).status).toBe(200);
    expect((await list('', {}, user)).status).toBe(200);
    const { id } = await replica.selectFrom('users').select('id').where('login', '=', user.login).executeTakeFirstOrThrow();
    const rotated = await (await lab.api(lab.admin, `/User?action=generateToken&id=${id}`, { method: 'POST' })).json() as
      { data: { apiToken: string } };
    expect((await list('', {}, user)).status).toBe(401);
    const renewed = { login: user.login, token: rotated.data.apiToken };
    expect((await list('', {}, renewed)).status).toBe(200);

    await replica.updateTable('users').set({ is_active: false }).where('id', '=', id).execute();
    expect((await list('', {}, renewed)).status).toBe(401);
  });
});
