/**
 * Errors sweep (issue item 7): malformed input of every kind thrown at every described route (the OpenAPI
 * description, which its own test keeps equal to the mounted routes). Each answer: never a 5xx, a failure Result
 * with a clear errorMessage, and no change in any table.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { ENDPOINTS, type ParamDescription } from '../../src/api/openapi/endpoints';
import { startTestLab, type TestLab } from '../support/lab';
import { snapshotTables } from '../support/table-snapshot';

let lab: TestLab;
let admin: { login: string; token: string };
let deviceId: string;
let otherId: string;

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1 });
  admin = lab.admin;
  const [device] = await (await lab.api(admin, '/Device')).json() as { id: string }[];
  deviceId = device.id;
  await lab.addUser('other@example.com', ['Tester']);
  otherId = (await lab.hub.db.selectFrom('users').select('id').where('login', '=', 'other@example.com').executeTakeFirstOrThrow()).id;
}, 90_000);

afterAll(() => lab?.stop(), 60_000);

const BAD: Record<ParamDescription['type'], string[]> = {
  guid: ['not-a-guid', '{7c9e6679-7425-40de-944b-e07fc1f90ae7', '7c9e6679742540de944be07fc1f90ae7zz', '💥'],
  bool: ['maybe', '1', 'yes', 'Tru'],
  int: ['99999999999', '-2147483649', '1.5', '12abc', '١٢'],
  date: ['31/31/2016 99:99:99 PM', 'yesterday', '2016-13-45', '💥'],
  enum: ['Sideways', '7', 'ＯＮＬＩＮＥ'],
  deviceId: ['no-such-device-💥', "x' OR '1'='1"],
  string: [],
};

interface Case { name: string; method: 'GET' | 'POST'; path: string; query?: string; body?: string | Buffer; type?: string }

function generatedCases(): Case[] {
  const cases: Case[] = [];
  for (const endpoint of ENDPOINTS) {
    for (const op of endpoint.operations) {
      const select = op.select ? `${op.select}&` : '';
      for (const param of op.params ?? []) {
        for (const value of BAD[param.type] ?? []) {
          cases.push({ name: `${endpoint.method.toUpperCase()} ${endpoint.path} ${op.select} ${param.name}=${value}`,
            method: endpoint.method === 'get' ? 'GET' : 'POST', path: endpoint.path,
            query: `${select}${param.name}=${encodeURIComponent(value)}` });
        }
      }
    }
    if (endpoint.method === 'post') {
      cases.push({ name: `POST ${endpoint.path} unknown action`, method: 'POST', path: endpoint.path, query: 'action=Frobnicate' });
      cases.push({ name: `POST ${endpoint.path} no operation, empty body`, method: 'POST', path: endpoint.path, body: '' });
      cases.push({ name: `POST ${endpoint.path} form body, unicode action`, method: 'POST', path: endpoint.path,
        body: 'action=%F0%9F%92%A5&id=%E9', type: 'application/x-www-form-urlencoded' });
    }
  }
  return cases;
}

const json = 'application/json';
const handWritten = (): Case[] => [
  { name: 'update device: broken JSON', method: 'POST', path: '/Device', query: `update&id=${deviceId}`, body: '{"notes": "x"', type: json },
  { name: 'update device: JSON array', method: 'POST', path: '/Device', query: `update&id=${deviceId}`, body: '["notes"]', type: json },
  { name: 'update device: slotNumber beyond int32', method: 'POST', path: '/Device', query: `update&id=${deviceId}`, body: '{"slotNumber": 99999999999}', type: json },
  { name: 'update device: bad bool', method: 'POST', path: '/Device', query: `update&id=${deviceId}`, body: '{"enabled": "maybe"}', type: json },
  { name: 'update device: unknown key', method: 'POST', path: '/Device', query: `update&id=${deviceId}`, body: '{"colour": "red"}', type: json },
  { name: 'update device: XML body', method: 'POST', path: '/Device', query: `update&id=${deviceId}`, body: '<notes>x</notes>', type: 'text/xml' },
  { name: 'update device: empty body', method: 'POST', path: '/Device', query: `update&id=${deviceId}`, body: '', type: json },
  { name: 'retain: id of unicode', method: 'POST', path: '/Device', query: 'action=retain&id=%F0%9F%92%A5' },
  { name: 'retain: no id', method: 'POST', path: '/Device', query: 'action=retain&id=' },
  { name: 'add user: broken JSON', method: 'POST', path: '/User', query: 'add', body: '{Email:"a@b.c", Password:', type: json },
  { name: 'add user: not an e-mail', method: 'POST', path: '/User', query: 'add', body: '{"Email":"333339332323","Password":"x"}', type: json },
  { name: 'add user: empty body', method: 'POST', path: '/User', query: 'add', body: '', type: json },
  { name: 'add role: broken JSON', method: 'POST', path: '/Role', query: 'add', body: '{name:', type: json },
  { name: 'settings: broken JSON', method: 'POST', path: '/Settings', query: 'update', body: '{"resetReboot":', type: json },
  { name: 'settings: bad bool', method: 'POST', path: '/Settings', query: 'update', body: '{"resetReboot":"perhaps"}', type: json },
  { name: 'upload: broken multipart', method: 'POST', path: '/Application', query: 'add&wait=true',
    body: '--XYZ\r\nContent-Disposition: form-data; name="upload"; filename="a.apk"\r\n\r\nPK', type: 'multipart/form-data; boundary=XYZ' },
  { name: 'upload: multipart without a boundary', method: 'POST', path: '/Application', query: 'add', body: 'x', type: 'multipart/form-data' },
  { name: 'upload: no file part', method: 'POST', path: '/Application', query: 'add&wait=true',
    body: '--XYZ\r\nContent-Disposition: form-data; name="note"\r\n\r\nhello\r\n--XYZ--\r\n', type: 'multipart/form-data; boundary=XYZ' },
  { name: 'upload: a text file', method: 'POST', path: '/Application', query: 'add&wait=true',
    body: '--XYZ\r\nContent-Disposition: form-data; name="upload"; filename="ipa.txt"\r\n\r\nhello\r\n--XYZ--\r\n', type: 'multipart/form-data; boundary=XYZ' },
  { name: 'upload: a JSON body', method: 'POST', path: '/Application', query: 'add&wait=true', body: '{}', type: json },
  { name: 'install: bad device and async wait', method: 'POST', path: '/Application',
    query: 'action=install&id=7c9e6679-7425-40de-944b-e07fc1f90ae7&deviceId=nope&wait=true' },
  { name: 'async: malformed id', method: 'GET', path: '/Async', query: 'id=%00%FF' },
  { name: 'legacy report: unknown type', method: 'GET', path: '/Report', query: 'type=everything' },
  { name: 'device list: bad percent escape', method: 'GET', path: '/Device', query: 'availability=%ZZ' },
  // PostgreSQL text cannot hold NUL: refused before any query, wherever it travels.
  { name: 'NUL in a query filter', method: 'GET', path: '/Device', query: 'name=a%00b' },
  { name: 'NUL in a device identifier', method: 'POST', path: '/Device', query: 'action=retain&id=%00' },
  { name: 'NUL in a form body', method: 'POST', path: '/Device', body: 'action=Retain&id=%00', type: 'application/x-www-form-urlencoded' },
  { name: 'NUL in a user filter', method: 'GET', path: '/User', query: 'firstName=%00' },
  { name: 'NUL in a report device', method: 'GET', path: '/Report/History', query: 'deviceId=%00' },
  { name: 'NUL in a JSON value', method: 'POST', path: '/Device', query: `update&id=${deviceId}`, body: '{"notes":"a\\u0000b"}', type: json },
  { name: 'NUL in a nested JSON value', method: 'POST', path: '/User', query: 'add', body: '{"Email":"n@example.com","properties":[{"name":"a\\u0000","value":"b"}]}', type: json },
  { name: 'NUL in a role name', method: 'POST', path: '/Role', query: 'add', body: '{"name":"r\\u0000"}', type: json },
  { name: 'NUL in an upload file name', method: 'POST', path: '/Application', query: 'add&wait=true',
    body: '--XYZ\r\nContent-Disposition: form-data; name="upload"; filename="a\u0000.apk"\r\n\r\nPK\r\n--XYZ--\r\n', type: 'multipart/form-data; boundary=XYZ' },
  { name: 'update application: a multipart body', method: 'POST', path: '/Application', query: 'update&id=7c9e6679-7425-40de-944b-e07fc1f90ae7',
    body: '--XYZ\r\nContent-Disposition: form-data; name="upload"; filename="a.apk"\r\n\r\nPK\r\n--XYZ--\r\n', type: 'multipart/form-data; boundary=XYZ' },
  { name: 'update device: __proto__ key', method: 'POST', path: '/Device', query: `update&id=${deviceId}`, body: '{"__proto__":{"x":1}}', type: json },
  { name: 'update device: 50000 nested objects', method: 'POST', path: '/Device', query: `update&id=${deviceId}`,
    body: `${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`, type: json },
  // A login is indexed (unique, ignoring case): a very long one must be refused before PostgreSQL's index limit.
  { name: 'add user: a 4000-character e-mail', method: 'POST', path: '/User', query: 'add',
    body: JSON.stringify({ Email: `${randomBytes(1500).toString('hex')}@example.com` }), type: json },
  { name: 'update user: a 4000-character e-mail', method: 'POST', path: '/User', query: `update&id=${otherId}`,
    body: JSON.stringify({ UserName: `${randomBytes(1500).toString('hex')}@example.com` }), type: json },
  { name: 'report: days reaching before the year 1', method: 'GET', path: '/Report/History', query: 'days=2147483647' },
  { name: 'usage: days reaching before the year 1', method: 'GET', path: '/Report/Usage', query: 'days=99999999' },
  { name: 'availability: days reaching before the year 1', method: 'GET', path: '/Report/Availability', query: 'days=2147483647' },
];

test('every route answers malformed input with a failure Result, never a 5xx, and changes nothing', async () => {
  const cases = [...generatedCases(), ...handWritten()];
  expect(cases.length).toBeGreaterThan(100);
  const before = await snapshotTables(lab.hub.db);
  const problems: string[] = [];
  for (const c of cases) {
    const headers: Record<string, string> = c.type ? { 'content-type': c.type } : {};
    const res = await lab.api(admin, `${c.path}${c.query ? `?${c.query}` : ''}`,
      { method: c.method, headers, ...(c.method === 'POST' ? { body: c.body ?? '' } : {}) });
    const text = await res.text();
    let body: { isSuccess?: boolean; errorMessage?: unknown } | undefined;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (res.status >= 500) problems.push(`${c.name}: HTTP ${res.status} ${text}`);
    else if (!body || body.isSuccess !== false) problems.push(`${c.name}: not a failure Result: HTTP ${res.status} ${text.slice(0, 200)}`);
    else if (typeof body.errorMessage !== 'string' || body.errorMessage.trim().length < 5) {
      problems.push(`${c.name}: unclear errorMessage ${JSON.stringify(body.errorMessage)}`);
    }
  }
  expect(problems).toEqual([]);
  expect(await snapshotTables(lab.hub.db)).toEqual(before);
  // No uploaded temporary file is left behind either (multipart bodies sent to every operation above).
  const uploads = path.join(lab.dataDir, 'uploads');
  expect(existsSync(uploads) ? readdirSync(uploads) : []).toEqual([]);
}, 120_000);
