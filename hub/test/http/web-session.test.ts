/**
 * The dashboard's session cookie against a real hub on its own database: sign in with login + API token, the
 * cookie's attributes, requests authenticated by it, the same-origin rule for changes, sign out, throttling.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createUser } from '../../src/auth/users';
import { startHub, type RunningHub } from '../../src/server';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

const ADMIN_TOKEN = '6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f';
let database: TestDatabase;
let hub: RunningHub;
let dataDir: string;

beforeAll(async () => {
  database = await createTestDatabase({ maxConnections: 2 });
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'devicelab-web-session-'));
  // The hub as behind a TLS-terminating proxy on this host: it learns its scheme from X-Forwarded-Proto.
  hub = await startHub({
    port: 0, host: '127.0.0.1', linkPort: 0, databaseUrl: database.url, dataDir, adminToken: ADMIN_TOKEN, uploadLimitBytes: 1024 * 1024,
    trustProxy: ['loopback'],
  });
}, 60_000);
afterAll(async () => {
  await hub?.stop();
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

const form = (fields: Record<string, string>) => ({
  method: 'POST', body: new URLSearchParams(fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' },
});

async function signIn(login: string, token: string, headers: Record<string, string> = {}): Promise<Response> {
  const init = form({ login, token });
  return fetch(`${hub.url}/apiv1/Session`, { ...init, headers: { ...init.headers, ...headers } });
}

function cookieOf(res: Response): string {
  const header = res.headers.get('set-cookie') ?? '';
  return header.split(';')[0];
}

it('a sign-in with login and token sets an HTTP-only SameSite=Strict cookie that authenticates API reads', async () => {
  const res = await signIn('admin', ADMIN_TOKEN);
  expect(res.status).toBe(200);
  const body: any = await res.json();
  expect(body).toMatchObject({ isSuccess: true, data: { login: 'admin' } });
  expect(body.data.entitlements).toContain('SystemManageUsbHubs');
  const setCookie = res.headers.get('set-cookie')!;
  expect(setCookie).toMatch(/^devicelab_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/);
  expect(setCookie).not.toContain('Secure'); // plain HTTP here; Secure is set over TLS

  const me = await fetch(`${hub.url}/apiv1/Session`, { headers: { cookie: cookieOf(res) } });
  expect(((await me.json()) as any).data.login).toBe('admin');
  const devices = await fetch(`${hub.url}/apiv1/Device`, { headers: { cookie: cookieOf(res) } });
  expect(devices.status).toBe(200);
  expect(await devices.json()).toEqual([]);
});

it('the records keep only a hash of the session token', async () => {
  const res = await signIn('admin', ADMIN_TOKEN);
  const token = cookieOf(res).split('=')[1];
  const rows = await hub.db.selectFrom('web_sessions').select(['token_sha256']).execute();
  expect(rows.length).toBeGreaterThan(0);
  for (const row of rows) expect(row.token_sha256.toString('utf8')).not.toContain(token);
  expect(rows.some((row) => row.token_sha256.length === 32)).toBe(true);
});

it('a wrong token gets a 401 without a cookie and without a Basic challenge', async () => {
  const res = await signIn('admin', '00000000-0000-4000-8000-000000000000');
  expect(res.status).toBe(401);
  expect(res.headers.get('set-cookie')).toBeNull();
  expect(res.headers.get('www-authenticate')).toBeNull();
  expect(((await res.json()) as any).isSuccess).toBe(false);
});

it('a change with only the cookie must come from the same origin or carry the CSRF header', async () => {
  const cookie = cookieOf(await signIn('admin', ADMIN_TOKEN));
  const cross = await fetch(`${hub.url}/apiv1/Device?action=retain&id=nothing`, { method: 'POST', headers: { cookie, origin: 'https://evil.example' } });
  expect(cross.status).toBe(403);
  const bare = await fetch(`${hub.url}/apiv1/Device?action=retain&id=nothing`, { method: 'POST', headers: { cookie } });
  expect(bare.status).toBe(403);
  const sameOrigin = await fetch(`${hub.url}/apiv1/Device?action=retain&id=nothing`, { method: 'POST', headers: { cookie, origin: hub.url } });
  expect(sameOrigin.status).toBe(200);
  expect(((await sameOrigin.json()) as any).errorMessage).toMatch(/not found/);
  const withHeader = await fetch(`${hub.url}/apiv1/Device?action=retain&id=nothing`, { method: 'POST', headers: { cookie, 'x-devicelab-csrf': '1' } });
  expect(withHeader.status).toBe(200);
});

it('the Origin must match the hub\'s scheme, host and port, and the CSRF header must say exactly 1', async () => {
  const cookie = cookieOf(await signIn('admin', ADMIN_TOKEN));
  const retain = (headers: Record<string, string>) =>
    fetch(`${hub.url}/apiv1/Device?action=retain&id=nothing`, { method: 'POST', headers: { cookie, ...headers } }).then((res) => res.status);
  const { hostname: host, port } = new URL(hub.url);
  expect(await retain({ origin: `https://${host}` })).toBe(403); // same host name, other scheme and port
  expect(await retain({ origin: `https://${host}:${port}` })).toBe(403); // same host and port, other scheme
  expect(await retain({ origin: `http://${host}:${Number(port) + 1}` })).toBe(403);
  expect(await retain({ 'x-devicelab-csrf': '0' })).toBe(403);
  expect(await retain({ 'x-devicelab-csrf': '' })).toBe(403);
  // Behind a trusted TLS-terminating proxy the hub's origin is https.
  expect(await retain({ origin: `https://${host}:${port}`, 'x-forwarded-proto': 'https' })).toBe(200);
  expect(await retain({ origin: `http://${host}:${port}`, 'x-forwarded-proto': 'https' })).toBe(403);
});

it('sign out deletes the session: the same cookie no longer authenticates', async () => {
  const cookie = cookieOf(await signIn('admin', ADMIN_TOKEN));
  const out = await fetch(`${hub.url}/apiv1/Session`, { method: 'DELETE', headers: { cookie, 'x-devicelab-csrf': '1' } });
  expect(out.status).toBe(200);
  expect(out.headers.get('set-cookie')).toMatch(/^devicelab_session=; .*Max-Age=0/);
  const after = await fetch(`${hub.url}/apiv1/Device`, { headers: { cookie } });
  expect(after.status).toBe(401);
  // The dashboard (CSRF header) is told without a Basic challenge, so no browser password dialog appears.
  const fromDashboard = await fetch(`${hub.url}/apiv1/Device`, { headers: { cookie, 'x-devicelab-csrf': '1' } });
  expect(fromDashboard.status).toBe(401);
  expect(fromDashboard.headers.get('www-authenticate')).toBeNull();
});

it('a deactivated user\'s session stops working at once; deactivated by hand in SQL, within 100 ms', async () => {
  const { user, token } = await createUser(hub.db, { login: 'leaver', roles: ['Tester'] });
  const cookie = cookieOf(await signIn('leaver', token));
  expect((await fetch(`${hub.url}/apiv1/Session`, { headers: { cookie } })).status).toBe(200);
  const update = await fetch(`${hub.url}/apiv1/User?update&id=${user.id}`, {
    method: 'POST', body: '{"IsActive":"False"}', headers: { authorization: ADMIN_AUTH, 'content-type': 'application/json' },
  });
  expect(((await update.json()) as { isSuccess: boolean }).isSuccess).toBe(true);
  expect((await fetch(`${hub.url}/apiv1/Session`, { headers: { cookie } })).status).toBe(401);

  // A write by something other than a hub replica (an operator's SQL) counts within the kept reads' window (50 ms).
  const second = await createUser(hub.db, { login: 'leaver-by-hand', roles: ['Tester'] });
  const secondCookie = cookieOf(await signIn('leaver-by-hand', second.token));
  expect((await fetch(`${hub.url}/apiv1/Session`, { headers: { cookie: secondCookie } })).status).toBe(200);
  await hub.db.updateTable('users').set({ is_active: false }).where('login', '=', 'leaver-by-hand').execute();
  const deactivated = performance.now();
  while ((await fetch(`${hub.url}/apiv1/Session`, { headers: { cookie: secondCookie } })).status !== 401) {
    expect(performance.now() - deactivated).toBeLessThan(100);
  }
});

const ADMIN_AUTH = `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`;
/** What the dashboard sends: the cookie and the CSRF header. */
const asDashboard = (cookie: string) => ({ cookie, 'x-devicelab-csrf': '1' });
const sessionStatus = async (cookie: string) => (await fetch(`${hub.url}/apiv1/Session`, { headers: asDashboard(cookie) })).status;

async function adminPost(pathAndQuery: string, body?: unknown): Promise<any> {
  const res = await fetch(`${hub.url}/apiv1/${pathAndQuery}`, {
    method: 'POST', headers: { authorization: ADMIN_AUTH, 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}),
  });
  expect(res.status).toBe(200);
  return res.json();
}

it('rotating a token ends the sessions signed in with it, whoever rotates it; other users\' sessions stay', async () => {
  const { user, token } = await createUser(hub.db, { login: 'leaked@example.com', roles: ['Tester'] });
  const first = cookieOf(await signIn('leaked@example.com', token));
  const second = cookieOf(await signIn('leaked@example.com', token));
  const adminCookie = cookieOf(await signIn('admin', ADMIN_TOKEN));
  expect(await sessionStatus(first)).toBe(200);

  // The user rotates their own token from the dashboard: the session that asked ends too.
  const rotated = await fetch(`${hub.url}/apiv1/User?action=generateToken&id=${user.id}`, { method: 'POST', headers: asDashboard(first) });
  const { data } = (await rotated.json()) as any;
  expect(data.apiToken).toMatch(/^[0-9a-f-]{36}$/);
  expect(await sessionStatus(first)).toBe(401);
  expect(await sessionStatus(second)).toBe(401);
  expect(await sessionStatus(adminCookie)).toBe(200);

  // A sign-in with the new token works until an administrator rotates it again.
  const third = cookieOf(await signIn('leaked@example.com', data.apiToken));
  expect(await sessionStatus(third)).toBe(200);
  await adminPost(`User?action=generateToken&id=${user.id}`);
  expect(await sessionStatus(third)).toBe(401);
});

it('a role change that takes entitlements away ends the user\'s sessions; one that only adds keeps them', async () => {
  await adminPost('Role?add', { name: 'Rebooters', entitlements: ['DeviceReboot'] });
  await adminPost('Role?add', { name: 'Listers', entitlements: ['UserList'] });
  const { user, token } = await createUser(hub.db, { login: 'demoted@example.com', roles: ['Tester', 'Listers'] });
  const cookie = cookieOf(await signIn('demoted@example.com', token));

  await adminPost(`User?update&id=${user.id}`, { roles: ['Tester', 'Listers', 'Rebooters'] });
  expect(await sessionStatus(cookie)).toBe(200);
  await adminPost(`User?update&id=${user.id}`, { roles: ['Tester', 'Rebooters'] });
  expect(await sessionStatus(cookie)).toBe(401);

  // The same when a role the user holds loses an entitlement.
  const again = cookieOf(await signIn('demoted@example.com', token));
  await adminPost('Role?update&name=Rebooters', { entitlements: ['DeviceReboot', 'UserList'] });
  expect(await sessionStatus(again)).toBe(200);
  await adminPost('Role?update&name=Rebooters', { entitlements: ['UserList'] });
  expect(await sessionStatus(again)).toBe(401);
});

it('an event stream opened with a session ends when the session does', async () => {
  const { user, token } = await createUser(hub.db, { login: 'streamer@example.com', roles: ['Tester'] });
  const cookie = cookieOf(await signIn('streamer@example.com', token));
  const res = await fetch(`${hub.url}/apiv1/Events`, { headers: asDashboard(cookie) });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  expect((await reader.read()).done).toBe(false); // the opening frame
  await adminPost(`User?action=generateToken&id=${user.id}`);
  const ended = (async () => { for (;;) if ((await reader.read()).done) return 'ended'; })();
  const stillOpen = new Promise((resolve) => setTimeout(() => resolve('still open'), 20_000));
  expect(await Promise.race([ended, stillOpen])).toBe('ended');
  await reader.cancel();
}, 30_000);

it('a deactivated user\'s session stays ended when the user is activated again', async () => {
  const { user, token } = await createUser(hub.db, { login: 'returning@example.com', roles: ['Tester'] });
  const cookie = cookieOf(await signIn('returning@example.com', token));
  await adminPost(`User?update&id=${user.id}`, { isActive: false });
  expect(await sessionStatus(cookie)).toBe(401);
  await adminPost(`User?update&id=${user.id}`, { isActive: true });
  expect(await sessionStatus(cookie)).toBe(401);
});

it('failed sign-ins are throttled like failed Basic logins', async () => {
  const statuses: number[] = [];
  for (let i = 0; i < 40; i++) {
    const res = await signIn('throttled', '00000000-0000-4000-8000-000000000000');
    statuses.push(res.status);
    if (res.status === 429) {
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      break;
    }
  }
  expect(statuses).toContain(429);
});

it('the dashboard is served at / with an SPA fallback that never shadows /apiv1', async () => {
  const page = await fetch(`${hub.url}/devices/some-id`, { headers: { accept: 'text/html' } });
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toMatch(/text\/html/);
  expect(page.headers.get('cache-control')).toBe('no-cache');
  expect((await fetch(`${hub.url}/no-such-page`, { headers: { accept: 'text/html' } })).status).toBe(404);
  const api = await fetch(`${hub.url}/apiv1/NoSuchThing`, { headers: { accept: 'text/html' } });
  expect(api.status).toBe(401);
  expect(api.headers.get('content-type')).toMatch(/json/);
});
