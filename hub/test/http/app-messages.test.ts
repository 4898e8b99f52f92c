import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { appMessageClasses } from '../../src/http/app-messages';

let server: http.Server;
let base: string;
/** What the first `request` listener saw, before Express took the request. */
const born: { request: boolean; response: boolean }[] = [];

beforeAll(async () => {
  const app = express();
  app.set('trust proxy', 'loopback');
  app.use(express.text());
  app.post('/echo', (req, res) => {
    res.status(201).set('X-Seen', `${req.method} ${req.path} ${req.ip}`).type('text/plain').send(String(req.body));
  });
  server = http.createServer(appMessageClasses(app), app);
  server.prependListener('request', (req, res) => {
    born.push({ request: Object.getPrototypeOf(req) === app.request, response: Object.getPrototypeOf(res) === app.response });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

test('requests and responses are born with the application\'s prototypes, so Express has none to change', async () => {
  await fetch(`${base}/echo`, { method: 'POST', body: 'x' });
  expect(born.at(-1)).toEqual({ request: true, response: true });
});

test('Node\'s message and Express\'s methods both work on them: body, status, headers, proxy address', async () => {
  const res = await fetch(`${base}/echo?q=1`, {
    method: 'POST', body: 'hello', headers: { 'content-type': 'text/plain', 'x-forwarded-for': '203.0.113.9' },
  });
  expect(res.status).toBe(201);
  expect(res.headers.get('x-seen')).toBe('POST /echo 203.0.113.9');
  expect(await res.text()).toBe('hello');
});
