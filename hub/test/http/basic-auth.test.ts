import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import pino from 'pino';
import { AUTHENTICATION_REQUIRED_BODY, basicAuthMiddleware } from '../../src/http/basic-auth';
import { LoginThrottle } from '../../src/auth/login-throttle';
import { createUser } from '../../src/auth/users';
import { ensureBuiltInRolesAndAdmin } from '../../src/auth/users';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let t: TestDatabase;
let server: Server;
let base: string;
let token: string;
const servers: Server[] = [];

interface TestApp { base: string; logLines: Record<string, unknown>[]; advance(ms: number): void }

/**
 * The middleware on its own server, with its own throttle on a clock the test moves. With `trustProxy`
 * ('loopback'), X-Forwarded-For names the client, so one test process can speak from many addresses.
 */
async function startApp(options: { trustProxy?: string; throttle?: LoginThrottle } = {}): Promise<TestApp> {
  let now = Date.now();
  const logLines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => { logLines.push(JSON.parse(line) as Record<string, unknown>); } });
  const app = express();
  if (options.trustProxy) app.set('trust proxy', options.trustProxy);
  app.use('/apiv1', basicAuthMiddleware(t.db, { logger, throttle: options.throttle ?? new LoginThrottle({ now: () => now }) }));
  app.get('/apiv1/whoami', (req, res) => {
    res.json({ login: req.user!.login, displayName: req.user!.displayName, canList: req.user!.entitlements.has('DeviceList') });
  });
  const s = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  servers.push(s);
  return { base: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, logLines, advance: (ms) => { now += ms; } };
}

beforeAll(async () => {
  t = await createTestDatabase();
  await ensureBuiltInRolesAndAdmin(t.db);
  ({ token } = await createUser(t.db, { login: 'basic@example.com', firstName: 'Basic', roles: ['Tester'] }));
  // The app of the plain 401 tests, which fail far more often than the throttle allows.
  const unlimited = { burst: 1_000_000, refillMs: 1 };
  ({ base } = await startApp({ throttle: new LoginThrottle({ perAddress: unlimited, perLogin: unlimited, perTrustedClient: unlimited }) }));
});

afterAll(async () => {
  for (const s of servers) await new Promise((resolve) => s.close(resolve));
  await t.drop();
});

const basic = (login: string, secret: string) => `Basic ${Buffer.from(`${login}:${secret}`).toString('base64')}`;

/** GET whoami as `client` (an X-Forwarded-For address; only honoured by an app that trusts the proxy). */
async function whoami(app: TestApp, authorization: string, client?: string): Promise<Response> {
  const res = await fetch(`${app.base}/apiv1/whoami`, {
    headers: { authorization, ...(client ? { 'x-forwarded-for': client } : {}) },
  });
  await res.clone().arrayBuffer();
  return res;
}

/** Sends `count` wrong tokens for `login` from `client`; returns their statuses. */
async function failLogins(app: TestApp, login: string, count: number, client?: string): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) statuses.push((await whoami(app, basic(login, randomUUID()), client)).status);
  return statuses;
}

async function expectChallenge(path: string, authorization?: string): Promise<void> {
  const res = await fetch(`${base}${path}`, { headers: authorization ? { authorization } : {} });
  expect(res.status).toBe(401);
  expect(res.headers.get('www-authenticate')).toBe('Basic realm="DeviceLab"');
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(await res.text()).toBe(AUTHENTICATION_REQUIRED_BODY);
}

describe('basic auth middleware', () => {
  it('lets valid credentials through with req.user set', async () => {
    const res = await fetch(`${base}/apiv1/whoami`, { headers: { authorization: basic('BASIC@example.com', token) } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ login: 'basic@example.com', displayName: 'Basic', canList: true });
  });

  it('answers 401 with the challenge and the exact body on every guarded path', async () => {
    expect(AUTHENTICATION_REQUIRED_BODY).toBe('{"isSuccess":false,"errorMessage":"Authentication required."}');
    await expectChallenge('/apiv1/whoami');
    await expectChallenge('/apiv1/does/not/exist');
    await expectChallenge('/apiv1/whoami', basic('basic@example.com', '00000000-0000-0000-0000-000000000000'));
    await expectChallenge('/apiv1/whoami', basic('nobody@example.com', token));
    await expectChallenge('/apiv1/whoami', 'Bearer abc');
    await expectChallenge('/apiv1/whoami', 'Basic !!!not-base64');
    await expectChallenge('/apiv1/whoami', `Basic ${Buffer.from('no-colon').toString('base64')}`);
  });

  it('refuses a deactivated user', async () => {
    await t.db.updateTable('users').set({ is_active: false }).where('login', '=', 'basic@example.com').execute();
    await expectChallenge('/apiv1/whoami', basic('basic@example.com', token));
    await t.db.updateTable('users').set({ is_active: true }).where('login', '=', 'basic@example.com').execute();
  });
});

describe('malformed credentials', () => {
  it('refuses credentials with anything after the token or after the base64', async () => {
    await expectChallenge('/apiv1/whoami', basic('basic@example.com', `${token}:anything`));
    await expectChallenge('/apiv1/whoami', `${basic('basic@example.com', token)} extra`);
    await expectChallenge('/apiv1/whoami', `${basic('basic@example.com', token)}==`);
    await expectChallenge('/apiv1/whoami', basic('basic@example.com\u0007', token));
    await expectChallenge('/apiv1/whoami', `Basic ${Buffer.from(`basic@example.com:${token}`).toString('base64').replace(/=+$/, '')}!`);
    await expectChallenge('/apiv1/whoami', `Basic ${Buffer.concat([Buffer.from('basic@example.com:'), Buffer.from([0xff])]).toString('base64')}`);
  });

  it('still accepts well-formed credentials, the scheme in any case', async () => {
    const credentials = Buffer.from(`basic@example.com:${token}`).toString('base64');
    for (const header of [`Basic ${credentials}`, `basic ${credentials}`, `BASIC  ${credentials}`]) {
      expect((await fetch(`${base}/apiv1/whoami`, { headers: { authorization: header } })).status).toBe(200);
    }
  });
});

describe('failed-login throttling', () => {
  it('answers 429 with Retry-After to a client address flooding wrong tokens, and lets it try again later', async () => {
    const app = await startApp();
    expect(await failLogins(app, 'basic@example.com', 10)).toEqual(Array(10).fill(401));
    const refused = await whoami(app, basic('basic@example.com', randomUUID()));
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('6');
    expect(await refused.json()).toEqual({
      isSuccess: false,
      errorMessage: 'Too many failed logins from this client address or for this login; try again in 6 second(s).',
    });
    // Not even right credentials are looked at for a login this address never authenticated as.
    expect((await whoami(app, basic('basic@example.com', token))).status).toBe(429);
    expect((await whoami(app, basic('admin', randomUUID()))).status).toBe(429);

    app.advance(6_000); // one more failure allowed, then refused again
    expect(await failLogins(app, 'basic@example.com', 2)).toEqual([401, 429]);
    app.advance(6_000);
    expect((await whoami(app, basic('basic@example.com', token))).status).toBe(200);
  });

  it('keeps a client that authenticated before working while its login and its address are attacked', async () => {
    const app = await startApp({ trustProxy: 'loopback' });
    expect((await whoami(app, basic('basic@example.com', token), '10.0.0.1')).status).toBe(200);

    // Many addresses, a few guesses each: the login's own budget runs out.
    const spread: number[] = [];
    for (let n = 1; n <= 6; n++) spread.push(...await failLogins(app, 'basic@example.com', 2, `10.1.0.${n}`));
    expect(spread.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(spread.slice(10)).toEqual([429, 429]);
    // A client never seen with this login is held off, even with the right token ...
    expect((await whoami(app, basic('basic@example.com', token), '10.2.0.1')).status).toBe(429);
    // ... but the client that authenticated before is not.
    expect((await whoami(app, basic('basic@example.com', token), '10.0.0.1')).status).toBe(200);

    // Someone else behind the same address (NAT) floods with other logins: the address is throttled, the known
    // client is not.
    expect(await failLogins(app, 'mallory@example.com', 11, '10.0.0.1')).toContain(429);
    expect((await whoami(app, basic('admin', randomUUID()), '10.0.0.1')).status).toBe(429);
    expect((await whoami(app, basic('basic@example.com', token), '10.0.0.1')).status).toBe(200);
  });

  it('throttles a /64 as one client, and ignores X-Forwarded-For unless a proxy is trusted', async () => {
    const proxied = await startApp({ trustProxy: 'loopback' });
    const v6 = Array.from({ length: 11 }, (_, n) => `2001:db8:1:2::${(n + 1).toString(16)}`);
    const statuses: number[] = [];
    for (const client of v6) statuses.push(...await failLogins(proxied, `user${client}@example.com`, 1, client));
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses[10]).toBe(429);

    const direct = await startApp();
    const spoofed: number[] = [];
    for (let n = 1; n <= 11; n++) spoofed.push(...await failLogins(direct, `user${n}@example.com`, 1, `10.9.0.${n}`));
    expect(spoofed.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(spoofed[10]).toBe(429);
  });

  it('logs each failed login once, with login, client address and reason, never the token', async () => {
    const app = await startApp({ trustProxy: 'loopback' });
    const wrong = randomUUID();
    await whoami(app, basic('basic@example.com', wrong), '10.3.0.1');
    await whoami(app, basic('nobody@example.com', token), '10.3.0.2');
    await whoami(app, basic('basic@example.com', `${token}:x`), '10.3.0.3');
    await whoami(app, basic('basic@example.com', token), '10.3.0.4'); // success: no line
    await fetch(`${app.base}/apiv1/whoami`); // no credentials yet (a client waiting for the challenge): no line
    expect(app.logLines.map(({ msg, login, clientAddress, reason }) => ({ msg, login, clientAddress, reason }))).toEqual([
      { msg: 'authentication failed', login: 'basic@example.com', clientAddress: '10.3.0.1', reason: 'wrong token' },
      { msg: 'authentication failed', login: 'nobody@example.com', clientAddress: '10.3.0.2', reason: 'unknown login' },
      {
        msg: 'authentication failed', login: 'basic@example.com', clientAddress: '10.3.0.3',
        reason: 'malformed credentials: more than one colon',
      },
    ]);
    const logged = JSON.stringify(app.logLines);
    expect(logged).not.toContain(wrong);
    expect(logged).not.toContain(token);
    expect(logged).not.toContain(Buffer.from(`basic@example.com:${wrong}`).toString('base64'));
  });
});
