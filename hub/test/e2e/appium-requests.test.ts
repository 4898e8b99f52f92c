/**
 * The WebDriver endpoint's own answers, against a whole lab: hostile new-session bodies (huge, deep, wide,
 * malformed, not UTF-8) get a W3C error with the right status and change nothing; credentials by Basic auth or by
 * the deviceConnect* capabilities, both through the hub's check and its login throttle; a user without the
 * entitlement, a request no device matches, an unknown session, an unknown path; `GET /Device` unchanged; a
 * session Appium refuses on a device its user held before leaves that retain.
 */
import { startTestLab, type TestLab } from '../support/lab';
import { snapshotTables } from '../support/table-snapshot';

let lab: TestLab;
let tester: { login: string; token: string };
let viewer: { login: string; token: string };

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1 });
  tester = await lab.addUser('tester@example.com', ['Tester']);
  const roles = await lab.api(lab.admin, '/Role?add', {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Viewer', entitlements: ['DeviceList'] }),
  });
  expect(await roles.json()).toMatchObject({ isSuccess: true });
  viewer = await lab.addUser('viewer@example.com', ['Viewer']);
  // First logins are events; they happen here, not inside a test that checks nothing changes.
  for (const who of [tester, viewer]) expect((await lab.api(who, '/Device')).status).toBe(200);
}, 90_000);
afterAll(async () => lab?.stop(), 60_000);

const basic = (who: { login: string; token: string }) => `Basic ${Buffer.from(`${who.login}:${who.token}`).toString('base64')}`;

async function webDriver(path: string, init: RequestInit & { headers?: Record<string, string> } = {}) {
  const res = await fetch(`${lab.hub.url}${path}`, init);
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, headers: res.headers, body: body as { value?: { error?: string; message?: string; stacktrace?: string } } };
}

const newSession = (body: string | Buffer, headers: Record<string, string> = {}) => webDriver('/Appium/session', {
  method: 'POST', body, headers: { 'content-type': 'application/json', authorization: basic(tester), ...headers },
});

test('hostile new-session bodies: a W3C invalid argument each, with the reason, and nothing changes', async () => {
  const before = await snapshotTables(lab.hub.db);
  const deep = '{"capabilities":{"alwaysMatch":' + '{"a":'.repeat(60) + '1' + '}'.repeat(60) + '}}';
  const wide = JSON.stringify({ capabilities: { alwaysMatch: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i])) } });
  const huge = JSON.stringify({ capabilities: { alwaysMatch: { 'appium:x': 'y'.repeat(2 * 1024 * 1024) } } });
  const cases: [string, string | Buffer, RegExp][] = [
    ['deep', deep, /deeper than 32/],
    ['wide', wide, /more than 1000/],
    ['huge', huge, /larger than 262144 bytes/],
    ['malformed', '{"capabilities": {"alwaysMatch": ', /not JSON/],
    ['not UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), /not UTF-8/],
    ['an array', '[1,2,3]', /JSON object/],
    ['no capabilities', '{"foo":1}', /neither "capabilities" nor "desiredCapabilities"/],
    ['bad types', '{"capabilities":{"alwaysMatch":{"platformName":42}}}', /Android or iOS/],
  ];
  for (const [what, body, message] of cases) {
    const answer = await newSession(body);
    expect({ what, status: answer.status, body: answer.body }).toEqual({
      what, status: 400, body: { value: { error: 'invalid argument', message: expect.stringMatching(message), stacktrace: '' } },
    });
  }
  // The same under /wd/hub, the path many clients default to.
  const legacyPath = await webDriver('/wd/hub/session', { method: 'POST', body: deep, headers: { authorization: basic(tester) } });
  expect(legacyPath.body.value?.error).toBe('invalid argument');
  expect(await snapshotTables(lab.hub.db)).toEqual(before);
  // The hub still serves.
  expect((await lab.api(lab.admin, '/Device')).status).toBe(200);
}, 60_000);

test('a user without DeviceConnect is refused (session not created) and nothing is retained', async () => {
  const before = await snapshotTables(lab.hub.db);
  const answer = await newSession(JSON.stringify({ capabilities: { alwaysMatch: { platformName: 'Android' } } }), { authorization: basic(viewer) });
  expect(answer.status).toBe(500);
  expect(answer.body.value).toMatchObject({ error: 'session not created', message: 'User does not have required entitlement: DeviceConnect' });
  expect(await snapshotTables(lab.hub.db)).toEqual(before);
});

test('deviceConnect* credentials authenticate as Basic auth does: the user\'s entitlements apply', async () => {
  const answer = await webDriver('/Appium/session', { method: 'POST', body: JSON.stringify({ desiredCapabilities: {
    platformName: 'Android', deviceConnectUsername: viewer.login, deviceConnectApiKey: viewer.token } }) });
  expect(answer.status).toBe(500);
  expect(answer.body.value?.message).toBe('User does not have required entitlement: DeviceConnect');
});

test('no device matches: session not created, saying so; the lab is unchanged', async () => {
  const before = await snapshotTables(lab.hub.db);
  const answer = await newSession(JSON.stringify({ capabilities: { alwaysMatch: {
    platformName: 'Android', 'appium:platformVersion': '99', 'devicelab:queueTimeout': 1 } } }));
  expect(answer.status).toBe(500);
  expect(answer.body.value).toMatchObject({ error: 'session not created', message: expect.stringMatching(/No device .*matches.*osVersion=99/) });
  expect(await snapshotTables(lab.hub.db)).toEqual(before);
});

test('an unknown session and an unknown path get W3C errors; credentials of another kind are checked too', async () => {
  const unknown = await webDriver('/Appium/session/4b9b1f5e-0000-4000-8000-000000000000/source', { headers: { authorization: basic(tester) } });
  expect(unknown.status).toBe(404);
  expect(unknown.body.value).toMatchObject({ error: 'invalid session id', message: expect.stringMatching(/No session .* is known/) });
  const noCredentials = await webDriver('/wd/hub/session/4b9b1f5e-0000-4000-8000-000000000000/url', { method: 'POST', body: '{}' });
  expect(noCredentials.body.value?.error).toBe('invalid session id');
  const wrong = await webDriver('/Appium/session/x/source', { headers: { authorization: basic({ login: tester.login, token: 'nope' }) } });
  expect(wrong.status).toBe(401);
  const path = await webDriver('/Appium/elsewhere', { headers: { authorization: basic(tester) } });
  expect(path.status).toBe(404);
  expect(path.body.value?.error).toBe('unknown command');
  const queue = await webDriver('/Appium/queue', { headers: { authorization: basic(tester) } });
  expect(queue.status).toBe(403);
  const adminQueue = await webDriver('/Appium/queue', { headers: { authorization: basic(lab.admin) } });
  expect(adminQueue).toMatchObject({ status: 200, body: { value: [] } });
});

// Last: it spends this client address's budget of failed logins.
test('no credentials, wrong Basic auth, wrong deviceConnect* capabilities: 401, counted by the login throttle', async () => {
  const caps = (login: string, apiKey: string) => JSON.stringify({ capabilities: { alwaysMatch: {
    platformName: 'Android', 'appium:deviceConnectUserName': login, 'appium:deviceConnectApiKey': apiKey } } });
  const none = await webDriver('/Appium/session', { method: 'POST', body: JSON.stringify({ capabilities: {} }) });
  expect(none.status).toBe(401);
  expect(none.headers.get('www-authenticate')).toMatch(/^Basic/);
  expect(none.body.value).toMatchObject({ error: 'session not created', message: expect.stringMatching(/deviceConnectUserName/) });
  const wrongBasic = await newSession(JSON.stringify({ capabilities: {} }), { authorization: basic({ login: tester.login, token: 'wrong' }) });
  expect(wrongBasic.status).toBe(401);
  const statuses: number[] = [];
  for (let i = 0; i < 12; i++) {
    const answer = await webDriver('/Appium/session', { method: 'POST', body: caps('nobody@example.com', `guess-${i}`) });
    statuses.push(answer.status);
  }
  expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
  expect(statuses.at(-1)).toBe(429); // the same budget as Basic auth's failed logins
}, 60_000);

test('a session on a device its user holds that Appium refuses leaves the user\'s retain as it was', async () => {
  const [device] = await lab.hub.db.selectFrom('devices').select(['id']).execute();
  expect((await lab.api(tester, `/Device?action=retain&id=${device.id}`, { method: 'POST' })).status).toBe(200);
  const retainOf = () => lab.hub.db.selectFrom('devices').select(['retain_id', 'retained_by']).where('id', '=', device.id).executeTakeFirstOrThrow();
  const before = await retainOf();
  // A one-second queue timeout: waiting in line for the held device would end in 'session not created' (the wait's
  // timeout); Appium's own refusal of the driver, relayed, shows the session was tried on the held device at once.
  const refused = await newSession(JSON.stringify({ capabilities: { alwaysMatch: {
    platformName: 'Android', 'appium:udid': device.id, 'appium:automationName': 'NoSuchDriver', 'devicelab:queueTimeout': 1 } } }));
  expect(refused.status).toBe(500);
  expect({ error: refused.body.value?.error, message: refused.body.value?.message }).toEqual({ error: 'unknown error', message: expect.stringMatching(/NoSuchDriver/i) });
  expect(await retainOf()).toEqual(before);
  expect((await lab.api(tester, `/Device?action=release&id=${device.id}`, { method: 'POST' })).status).toBe(200);
}, 120_000);
