/**
 * /Device/Metrics over HTTP with real Basic authentication: the document download (JSON and CSV, file name in
 * Content-Disposition), request date forms, the wire rules for parameters, failure Results, the marker and
 * passive-logging actions (C#-style form bodies), and a retain/release cycle queried with `marker=session`.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@devicelab/shared';
import { createApiApp } from '../../src/api/app';
import { BlobStore } from '../../src/apps/blob-store';
import { basicAuthMiddleware } from '../../src/http/basic-auth';
import { createUser, ensureBuiltInRolesAndAdmin } from '../../src/auth/users';
import { newTicketKeys } from '../../src/domain/device-ticket';
import type { LinkServer } from '../../src/gateways/link-server';
import { PostgresMetricsStore } from '../../src/metrics/postgres-metrics-store';
import { insertDevice, startIdleLinkServer } from '../domain/helpers';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

const ADMIN = `admin:11111111-2222-4333-8444-555555555555`;
let t: TestDatabase;
let link: LinkServer;
let server: http.Server;
let base: string;
let store: PostgresMetricsStore;
let tester: string;
let device: { id: string; name: string; serial_number: string | null };

const BASE = Date.parse('2026-11-22T10:00:00Z');
const at = (second: number) => new Date(BASE + second * 1000);
const iso = (second: number) => at(second).toISOString().replace('.000Z', 'Z');
const pad = (n: number) => String(n).padStart(2, '0');
/** The server's local time zone forms (no offset = server time, wire rule 7 of docs/wire-rules.md). */
const localIso = (d: Date) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
const usCulture = (d: Date) => {
  const h = d.getHours() % 12 || 12;
  return `${d.getMonth() + 1}/${d.getDate()}/${d.getFullYear()} ${h}:${pad(d.getMinutes())}:${pad(d.getSeconds())} ${d.getHours() < 12 ? 'AM' : 'PM'}`;
};

async function call(method: string, pathAndQuery: string, options: { auth?: string; form?: string } = {}) {
  const headers: Record<string, string> = {};
  if (options.auth !== '') headers.authorization = `Basic ${Buffer.from(options.auth ?? ADMIN).toString('base64')}`;
  if (options.form !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
  const res = await fetch(`${base}${pathAndQuery}`, { method, headers, body: options.form });
  return { status: res.status, headers: res.headers, text: await res.text() };
}
const get = async (query: string, auth?: string) => call('GET', `/Device/Metrics?${query}`, { auth });
const json = async (query: string, auth?: string) => JSON.parse((await get(query, auth)).text);
const values = async (query: string) => (await json(query)).results[0].series?.[0]?.values.map((v: unknown[]) => v[0]);

beforeAll(async () => {
  t = await createTestDatabase();
  await ensureBuiltInRolesAndAdmin(t.db, { adminToken: ADMIN.split(':')[1] });
  tester = `tester@lab.test:${(await createUser(t.db, { login: 'tester@lab.test', roles: ['Tester'] })).token}`;
  link = await startIdleLinkServer(t.db);
  store = new PostgresMetricsStore(t.db, { retentionDays: 36500 });
  const app = createApiApp({
    db: t.db, blobs: new BlobStore(t.db), gateways: link.directory,
    authenticate: basicAuthMiddleware(t.db), logger: createLogger('test'), ticketKeys: newTicketKeys(),
    serviceNodeId: 'node-1', metrics: store,
  });
  server = http.createServer(app).listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/apiv1`;
  device = await insertDevice(t.db, { name: 'Pixel 7', serial_number: 'SER-HTTP-1', vendor_unique_identifier: 'SER-HTTP-1' });
  const rows = [...Array(10).keys()].map((i) => ({
    deviceId: device.id, table: 'sample' as const, timeUs: at(i).getTime() * 1000,
    values: new Map<string, number>([['Used', 100 + i], ['Bytes In Per Second', i * 1.5]]),
  }));
  await store.ingest(rows, at(0));
});

afterAll(async () => {
  server?.close();
  await link?.stop();
  await t?.drop();
});

describe('GET /Device/Metrics', () => {
  it('answers an InfluxDB-1.x JSON document as an attachment named metrics-<device name>.json', async () => {
    const res = await get(`id=SER-HTTP-1&table=sample&fields=Memory:+Used&start=${iso(0)}&end=${iso(1)}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="metrics-Pixel 7.json"; filename*=UTF-8''metrics-Pixel%207.json`);
    expect(JSON.parse(res.text)).toEqual({ results: [{ statement_id: 0, series: [
      { name: 'sample', columns: ['time', 'Used'], values: [[iso(0), 100], [iso(1), 101]] },
    ] }] });
  });

  it('pretty=true indents the JSON document; the CSV stays as it is', async () => {
    const query = `id=${device.id}&table=sample&fields=Used&limit=2`;
    const compact = (await get(query)).text;
    const pretty = await get(`${query}&pretty=true`);
    expect(pretty.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(pretty.text).toBe(JSON.stringify(JSON.parse(compact), null, 2));
    expect(pretty.text).toContain('\n  "results": [');
    expect((await get(`${query}&format=csv&pretty=true`)).text).toBe((await get(`${query}&format=csv`)).text);
  });

  it('csv with a filename: text/csv, the extension set from the format', async () => {
    const res = await get(`id=${device.id}&table=sample&fields=Used,Bytes+In+Per+Second&limit=2&format=csv&filename=run+42`);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toContain('filename="run 42.csv"');
    expect(res.text).toBe(`name,tags,time,Used,Bytes In Per Second\r\nsample,,${iso(0)},100,0\r\nsample,,${iso(1)},101,1.5\r\n`);
  });

  it('start and end in every request date form: UTC, offset, local ISO, US culture, date only', async () => {
    const shifted = `${at(2).toISOString().slice(0, 11)}${pad(at(2).getUTCHours() + 2)}:00:02+02:00`;
    expect(await values(`id=${device.id}&table=sample&fields=Used&start=${iso(8)}`)).toEqual([iso(8), iso(9)]);
    expect(await values(`id=${device.id}&table=sample&fields=Used&end=${encodeURIComponent(shifted)}`)).toEqual([iso(0), iso(1), iso(2)]);
    expect(await values(`id=${device.id}&table=sample&fields=Used&start=${localIso(at(7))}&end=${localIso(at(8))}`)).toEqual([iso(7), iso(8)]);
    expect(await values(`id=${device.id}&table=sample&fields=Used&start=${encodeURIComponent(usCulture(at(9)))}`)).toEqual([iso(9)]);
    const day = localIso(at(0)).slice(0, 10);
    expect(await values(`id=${device.id}&table=sample&fields=Used&start=${day}&end=${day}`)).toHaveLength(10);
  });

  it('orderBy with the space sent as + or %20; parameter names in any case', async () => {
    expect(await values(`ID=${device.id}&Table=sample&Fields=Used&LIMIT=2&orderby=time+desc`)).toEqual([iso(9), iso(8)]);
    expect(await values(`id=${device.id}&table=sample&fields=Used&limit=2&orderBy=time%20DESC`)).toEqual([iso(9), iso(8)]);
  });

  it('failures are failure Results (HTTP 200): spec 7.4 rules, bad numbers and dates, hostile values', async () => {
    // The third element names the parameter a failure Result names in `errorParameter` (code INVALID_PARAMETER).
    const failures: [string, string, string?][] = [
      ['table=sample&aggr=mean&start=2026-11-22', "Parameter 'aggr' requires 'fields': name the fields the functions apply to."],
      ['table=sample&offset=1&start=2026-11-22', "Parameter 'offset' is allowed only together with 'limit'."],
      ['table=sample&fields=Used', "A metrics query needs at least one of 'limit', 'marker', 'start' or 'end'."],
      ['limit=1', "Parameter 'table' is required."],
      ['table=sample&limit=ten', 'Input string was not in a correct format.', 'limit'],
      ['table=sample&start=yesterday', "String 'yesterday' was not recognized as a valid DateTime.", 'start'],
      ['table=sample&limit=1&fields=Used%27%3B+DROP+TABLE+devices%3B--', "Unknown field 'Used'; DROP TABLE devices;--' in table sample."],
      ['table=sample%3BDROP+TABLE+devices&limit=1', "Unknown metrics table 'sample;DROP TABLE devices'. Tables: usb_hub, log, health_check, sample."],
      ['table=sample&limit=1&orderBy=time%3B+SELECT+1', "Parameter 'orderBy' supports only 'time', optionally followed by 'asc' or 'desc'."],
    ];
    for (const [query, message, parameter] of failures) {
      const res = await get(`id=${device.id}&${query}`);
      const named = parameter ? { errorCode: 'INVALID_PARAMETER', errorParameter: parameter } : {};
      expect([res.status, JSON.parse(res.text)]).toEqual([200, { isSuccess: false, errorMessage: message, ...named }]);
    }
    expect(await t.db.selectFrom('devices').select('id').execute()).toHaveLength(1);
  });

  it('a start or end outside 0001-01-01..9999-12-31 (UTC) is a failure naming the parameter and the range', async () => {
    const range = 'Dates from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z (UTC) are accepted.';
    const cases: [string, string][] = [
      ['start=0000-01-01T00:00:00Z', `Parameter 'start' is out of range: '0000-01-01T00:00:00Z'. ${range}`],
      ['end=9999-12-31T23:59:59-23:59', `Parameter 'end' is out of range: '9999-12-31T23:59:59-23:59'. ${range}`],
      ['START=0001-01-01T01:00:00+02:00', `Parameter 'START' is out of range: '0001-01-01T01:00:00+02:00'. ${range}`],
    ];
    for (const [query, message] of cases) {
      const res = await get(`id=${device.id}&table=sample&fields=Used&${encodeURIComponent(query).replace('%3D', '=')}`);
      expect([res.status, JSON.parse(res.text)])
        .toEqual([200, { isSuccess: false, errorMessage: message, errorCode: 'INVALID_PARAMETER', errorParameter: query.split('=')[0] }]);
    }
    // The edges themselves are dates PostgreSQL is asked about, and answer (nothing stored that far out).
    for (const bound of ['start=0001-01-01T00:00:00Z', 'end=9999-12-31T23:59:59Z', 'end=9999-12-31', 'start=0050-06-01']) {
      expect(await json(`id=${device.id}&table=sample&fields=Used&${bound}`)).toEqual({ results: [expect.any(Object)] });
    }
  });

  it('without credentials: 401; unknown device: failure', async () => {
    expect((await get(`id=${device.id}&table=sample&limit=1`, '')).status).toBe(401);
    expect(await json('id=nope&table=sample&limit=1')).toEqual({ isSuccess: false, errorMessage: "Device 'nope' not found.", errorCode: 'DEVICE_NOT_FOUND' });
  });
});

describe('POST /Device/Metrics', () => {
  it('a marker workflow in C# style (form body, no query): start, stop, then query the marker', async () => {
    const post = (form: string, auth?: string) => call('POST', '/Device/Metrics', { form, auth });
    expect(JSON.parse((await post(`action=StartMarker&id=${device.id}&name=checkout+flow`, tester)).text)).toEqual({ isSuccess: true });
    expect(JSON.parse((await post(`action=startmarker&id=${device.id}&name=checkout+flow`, tester)).text))
      .toEqual({ isSuccess: false, errorMessage: "Marker 'checkout flow' is already started on device 'Pixel 7'." });
    expect(JSON.parse((await post(`action=stopmarker&id=${device.id}&name=checkout+flow`, tester)).text)).toEqual({ isSuccess: true });
    expect(JSON.parse((await post(`action=stopmarker&id=${device.id}&name=checkout+flow`, tester)).text))
      .toEqual({ isSuccess: false, errorMessage: "Marker 'checkout flow' is not started on device 'Pixel 7'." });
    expect(JSON.parse((await post(`action=startmarker&id=${device.id}`)).text)).toEqual({ isSuccess: false, errorMessage: "Parameter 'name' is required." });
    const found = await json(`id=${device.id}&table=sample&marker=checkout+flow&fields=Used`);
    expect(found.results[0]).toEqual({ statement_id: 0 }); // the period holds no samples (they are from 2026-11-22 10:00)
  });

  it('action=enabled needs Device modify, a boolean enable, and persists', async () => {
    const post = (query: string, auth?: string) => call('POST', `/Device/Metrics?${query}`, { auth });
    expect(JSON.parse((await post(`action=enabled&id=${device.id}&enable=false`, tester)).text))
      .toEqual({ isSuccess: false, errorMessage: 'User does not have required entitlement: DeviceModify', errorCode: 'ENTITLEMENT_REQUIRED' });
    expect(JSON.parse((await post(`action=enabled&id=${device.id}`)).text)).toEqual({ isSuccess: false, errorMessage: "Parameter 'enable' is required." });
    expect(JSON.parse((await post(`action=enabled&id=${device.id}&enable=maybe`)).text))
      .toEqual({ isSuccess: false, errorMessage: 'Value is not equivalent to either TrueString or FalseString.', errorCode: 'INVALID_PARAMETER', errorParameter: 'enable' });
    expect(JSON.parse((await post(`action=enabled&id=${device.id}&enable=False`)).text)).toEqual({ isSuccess: true });
    expect((await t.db.selectFrom('devices').select('metrics_enabled').where('id', '=', device.id).executeTakeFirstOrThrow()).metrics_enabled).toBe(false);
    expect(JSON.parse((await post(`action=enabled&id=${device.id}&enable=true`)).text)).toEqual({ isSuccess: true });
    expect(JSON.parse((await post(`action=launch&id=${device.id}`)).text)).toEqual({ isSuccess: false, errorMessage: "Unknown action 'launch'." });
  });

  it('a retain-then-release cycle is queryable with marker=session', async () => {
    expect(JSON.parse((await call('POST', `/Device?action=retain&id=${device.id}`, { auth: tester })).text).isSuccess).toBe(true);
    const now = Date.now();
    await store.ingest([{ deviceId: device.id, table: 'sample', timeUs: now * 1000, values: new Map([['Used', 4242]]) }]);
    expect(JSON.parse((await call('POST', `/Device?action=release&id=${device.id}`, { auth: tester })).text)).toEqual({ isSuccess: true });
    const found = await json(`id=${device.id}&table=sample&marker=session&fields=Used&aggr=count,max`);
    const [s] = found.results[0].series;
    expect(s.tags).toEqual(expect.objectContaining({ marker: 'session' }));
    expect(s.columns).toEqual(['time', 'count_Used', 'max_Used']);
    expect(s.values[0].slice(1)).toEqual([1, 4242]);
  });
});
