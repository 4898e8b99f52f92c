/**
 * Transport (spec 1.1, issue item 5): the hub serves the REST API over HTTPS when a certificate and key are
 * configured (DEVICELAB_TLS_CERT / DEVICELAB_TLS_KEY), plain HTTP otherwise. The certificate is a real
 * self-signed one made by the openssl CLI; the client checks it against that certificate as its only CA.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { hubConfigFromEnv } from '../../src/config';
import { startHub, type RunningHub } from '../../src/server';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

const ADMIN_TOKEN = '2c4e6a8b-1d3f-4a5b-8c7d-9e0f1a2b3c4d';
let database: TestDatabase;
let dataDir: string;
let hub: RunningHub;
let ca: Buffer;

beforeAll(async () => {
  database = await createTestDatabase({ maxConnections: 2 });
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'devicelab-https-'));
  const cert = path.join(dataDir, 'hub.crt');
  const key = path.join(dataDir, 'hub.key');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'],
  { stdio: 'ignore' });
  ca = readFileSync(cert);
  const config = hubConfigFromEnv({ DEVICELAB_TLS_CERT: cert, DEVICELAB_TLS_KEY: key, DEVICELAB_ADMIN_TOKEN: ADMIN_TOKEN });
  hub = await startHub({ ...config, port: 0, host: '127.0.0.1', linkPort: 0, databaseUrl: database.url, dataDir });
}, 60_000);

afterAll(async () => {
  await hub?.stop();
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

function httpsGet(url: string, options: https.RequestOptions): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    https.get(url, options, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { body += chunk; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

const basic = (login: string, token: string) => `Basic ${Buffer.from(`${login}:${token}`).toString('base64')}`;

test('with a certificate and key the API answers over HTTPS, verified against that certificate', async () => {
  expect(hub.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  const res = await httpsGet(`${hub.url}/apiv1/Device?pretty=true`, { ca, headers: { authorization: basic('admin', ADMIN_TOKEN) } });
  expect(res.status).toBe(200);
  expect(JSON.parse(res.body)).toEqual([]);
  const anonymous = await httpsGet(`${hub.url}/apiv1/Service`, { ca });
  expect(anonymous.status).toBe(401);
});

test('a client that does not trust the certificate is refused by TLS, and plain HTTP gets no API answer', async () => {
  await expect(httpsGet(`${hub.url}/apiv1/Service`, {})).rejects.toThrow(/self.signed|certificate/i);
  const plain = await fetch(`${hub.url.replace('https:', 'http:')}/apiv1/Service`).then(
    (res) => `HTTP ${res.status}`, (err: Error) => `failed: ${err.message}`);
  expect(plain).not.toBe('HTTP 200');
  expect(plain).not.toBe('HTTP 401');
});

test('half a TLS configuration is refused at start instead of silently serving plain HTTP', () => {
  expect(() => hubConfigFromEnv({ DEVICELAB_TLS_CERT: '/etc/hub.crt' })).toThrow(/DEVICELAB_TLS_CERT and DEVICELAB_TLS_KEY/);
  expect(() => hubConfigFromEnv({ DEVICELAB_TLS_KEY: '/etc/hub.key' })).toThrow(/must be set together/);
  expect(hubConfigFromEnv({}).tlsCertFile).toBeUndefined();
});
