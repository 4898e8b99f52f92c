/**
 * GET /apiv1/openapi.json (issue item 8): an OpenAPI 3.1 document that names exactly the routes mounted on the
 * real express app (walked from its router stack), so the document cannot drift from the code.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { createLogger } from '@devicelab/shared';
import { createApiApp } from '../../src/api/app';
import { describedRoutes, describedWebSocketPaths } from '../../src/api/openapi/document';
import { DEVICE_CONNECT_PATH } from '../../src/api/device-connect-socket';
import { DEVICE_SCREEN_PATH } from '../../src/api/device-screen-socket';
import { ENDPOINTS } from '../../src/api/openapi/endpoints';
import { describedWebDriverPaths } from '../../src/api/openapi/webdriver-paths';
import { appiumRouter, type AppiumRouteDependencies } from '../../src/api/appium-routes';
import { BlobStore } from '../../src/apps/blob-store';
import { basicAuthMiddleware } from '../../src/http/basic-auth';
import { webSessionRouter } from '../../src/http/web-session';
import { LoginThrottle } from '../../src/auth/login-throttle';
import { createUser, ensureBuiltInRolesAndAdmin } from '../../src/auth/users';
import { newTicketKeys } from '../../src/domain/device-ticket';
import type { LinkServer } from '../../src/gateways/link-server';
import { startIdleLinkServer } from '../domain/helpers';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

const ADMIN_TOKEN = '11111111-2222-4333-8444-555555555555';
let t: TestDatabase;
let link: LinkServer;
let app: Express;
let server: http.Server;
let base: string;

beforeAll(async () => {
  t = await createTestDatabase();
  await ensureBuiltInRolesAndAdmin(t.db, { adminToken: ADMIN_TOKEN });
  link = await startIdleLinkServer(t.db);
  app = createApiApp({
    db: t.db, blobs: new BlobStore(t.db), gateways: link.directory,
    authenticate: basicAuthMiddleware(t.db), signIn: webSessionRouter(t.db, { throttle: new LoginThrottle() }),
    logger: createLogger('test'), ticketKeys: newTicketKeys(),
    serviceNodeId: 'node-1', serviceVersion: '9.9.9',
  });
  server = http.createServer(app).listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/apiv1`;
});

afterAll(async () => {
  server?.close();
  await link?.stop();
  await t?.drop();
});

interface Layer { route?: { path: string; methods: Record<string, boolean> }; handle?: { stack?: Layer[] } }

/** Every `METHOD /path` registered on a router below /apiv1 (express 5: nested routers hang off layer.handle). */
function mountedRoutes(express: Express): string[] {
  const routes = new Set<string>();
  const walk = (stack: Layer[]) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const [method, on] of Object.entries(layer.route.methods)) {
          if (on && method !== '_all') routes.add(`${method.toUpperCase()} ${layer.route.path}`);
        }
      } else if (layer.handle?.stack) {
        walk(layer.handle.stack);
      }
    }
  };
  walk((express as unknown as { router: { stack: Layer[] } }).router.stack);
  return [...routes].sort();
}

const get = (pathAndQuery: string, token = ADMIN_TOKEN, login = 'admin') =>
  fetch(`${base}${pathAndQuery}`, { headers: { authorization: `Basic ${Buffer.from(`${login}:${token}`).toString('base64')}` } });

test('the document names every mounted route and no other', () => {
  const mounted = mountedRoutes(app);
  expect(mounted.length).toBeGreaterThan(10);
  const described = [...describedRoutes()].sort();
  expect({ missingFromDocument: mounted.filter((r) => !described.includes(r)),
    notMounted: described.filter((r) => !mounted.includes(r)) })
    .toEqual({ missingFromDocument: [], notMounted: [] });
});

test('GET /apiv1/openapi.json is OpenAPI 3.1 with every path, its parameters and the models', async () => {
  const res = await get('/openapi.json');
  expect(res.status).toBe(200);
  const doc = await res.json() as {
    openapi: string; info: { version: string }; servers: { url: string }[];
    paths: Record<string, Record<string, { parameters: { name: string; schema: { enum?: string[] }; description?: string }[];
      description: string }>>;
    components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
  };
  expect(doc.openapi).toBe('3.1.0');
  expect(doc.info.version).toBe('9.9.9');
  expect(doc.servers).toEqual([{ url: '/apiv1' }]);
  const documented = Object.entries(doc.paths).filter(([p]) => !p.startsWith('/Appium/'))
    .flatMap(([p, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${p}`)).sort();
  // The express routes, and the WebSocket endpoints the upgrade router serves (as GETs with an extension).
  expect(describedWebSocketPaths().map((p) => `/apiv1${p}`.toLowerCase())).toEqual([DEVICE_CONNECT_PATH, DEVICE_SCREEN_PATH]);
  expect(documented).toEqual([...mountedRoutes(app), ...describedWebSocketPaths().map((p) => `GET ${p}`)].sort());
  const connect = doc.paths['/Device/Connect'].get as unknown as { 'x-devicelab-websocket': unknown; responses: Record<string, unknown> };
  expect(connect['x-devicelab-websocket']).toBeDefined();
  expect(Object.keys(connect.responses)).toEqual(expect.arrayContaining(['101', '401', '403']));
  const postDevice = doc.paths['/Device'].post;
  expect(postDevice.parameters.find((x) => x.name === 'action')?.schema.enum)
    .toEqual(expect.arrayContaining(['retain', 'release', 'reboot']));
  expect(postDevice.description).toContain('`action=retain`: Retain (exclusively claim) a device. Extensions: `wait=<seconds>`');
  expect(doc.paths['/Device'].get.parameters.map((x) => x.name)).toEqual(expect.arrayContaining(['availability', 'enabled', 'properties']));
  // A key the vendor client offers without a meaning is documented as accepted and ignored, with the reason.
  expect(doc.paths['/Device'].get.parameters.find((x) => x.name === 'hardDelete')).toMatchObject({
    description: expect.stringMatching(/^Accepted and ignored: the C# client offers it \(DeviceProperties\)/) });
  expect(Object.keys(doc.components.schemas.DeviceAccessTicket.properties ?? {}))
    .toEqual(['authenticator', 'gatewayAddress', 'gatewayPort', 'deviceVendorUniqueIdentifier', 'serialNumber']);
  for (const model of ['Application', 'Device', 'User', 'Event', 'EventHistory', 'DeviceUsageHistory', 'HubInformation', 'AsyncStatus']) {
    expect(doc.components.schemas[model]).toBeDefined();
  }
  // Every $ref resolves.
  const refs = JSON.stringify(doc).match(/#\/components\/schemas\/[A-Za-z]+/g) ?? [];
  for (const ref of new Set(refs)) expect(doc.components.schemas[ref.split('/').pop()!]).toBeDefined();
});

/** Every operation name a client of the spec (or an extension) may send to a POST route. */
const KNOWN_OPERATIONS = ['update', 'delete', 'add', 'get', 'retain', 'release', 'reboot', 'enable', 'disable', 'reset',
  'install', 'uninstall', 'uninstallBundle', 'launch', 'generateToken', 'startmarker', 'stopmarker', 'enabled'];

test('every POST operation the routers answer is described, and every described one is answered', async () => {
  const problems: string[] = [];
  // POST /Report has no operations to select (it is a GET answered on POST too).
  for (const endpoint of ENDPOINTS.filter((e) => e.method === 'post' && e.operations.some((op) => op.select !== ''))) {
    const described = new Set(endpoint.operations.map((op) => op.select.replace(/^action=/, '').toLowerCase()));
    for (const name of new Set([...KNOWN_OPERATIONS, ...described])) {
      const select = ['update', 'delete', 'add', 'get'].includes(name.toLowerCase()) ? name : `action=${name}`;
      // No identifiers and no body: whatever the operation, it fails before it could change anything.
      const res = await fetch(`${base}${endpoint.path}?${select}`, { method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}` } });
      const { errorMessage = '' } = await res.json() as { errorMessage?: string };
      const answered = !/^(Unknown action '|No operation given)/.test(errorMessage);
      if (answered !== described.has(name.toLowerCase())) {
        problems.push(`POST ${endpoint.path}?${select}: ${answered ? 'answered but not described' : 'described but unknown'}`);
      }
    }
  }
  expect(problems).toEqual([]);
});

test('any authenticated user may read it (a user without roles), nobody unauthenticated', async () => {
  const { token } = await createUser(t.db, { login: 'no.roles@example.com', roles: [] });
  expect((await get('/openapi.json', token, 'no.roles@example.com')).status).toBe(200);
  expect((await fetch(`${base}/openapi.json`)).status).toBe(401);
});

test('the WebDriver endpoint\'s routes are the ones the document describes (under /Appium, served under /wd/hub too)', () => {
  const router = appiumRouter({ logger: createLogger('test') } as AppiumRouteDependencies) as unknown as { stack: Layer[] };
  const paths = router.stack.flatMap((layer) => {
    const path = layer.route?.path as unknown;
    return Array.isArray(path) ? path as string[] : typeof path === 'string' ? [path] : [];
  }).filter((path) => path !== '/*rest');
  expect([...new Set(paths)].sort()).toEqual(describedWebDriverPaths().sort());
});
