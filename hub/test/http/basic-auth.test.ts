import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { AUTHENTICATION_REQUIRED_BODY, basicAuthMiddleware } from '../../src/http/basic-auth';
import { createUser } from '../../src/auth/users';
import { ensureBuiltInRolesAndAdmin } from '../../src/auth/users';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let t: TestDatabase;
let server: Server;
let base: string;
let token: string;

beforeAll(async () => {
  t = await createTestDatabase();
  await ensureBuiltInRolesAndAdmin(t.db);
  ({ token } = await createUser(t.db, { login: 'basic@example.com', firstName: 'Basic', roles: ['Tester'] }));
  const app = express();
  app.use('/apiv1', basicAuthMiddleware(t.db));
  app.get('/apiv1/whoami', (req, res) => {
    res.json({ login: req.user!.login, displayName: req.user!.displayName, canList: req.user!.entitlements.has('DeviceList') });
  });
  server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await t.drop();
});

const basic = (login: string, secret: string) => `Basic ${Buffer.from(`${login}:${secret}`).toString('base64')}`;

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
