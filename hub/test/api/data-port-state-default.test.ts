/**
 * DEVICELAB_DATA_PORT_STATE (wire rule 26, docs/wire-rules.md): the hub configuration's default of the dataPortState
 * setting, read by the hub's config module and served by a running hub until an administrator stores a choice.
 * (/Gateway writing it for data ports is tested on a lab with a USB hub: gateway-usb-hubs.test.ts.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hubConfigFromEnv } from '../../src/config';
import { startHub, type RunningHub } from '../../src/server';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

test('DEVICELAB_DATA_PORT_STATE: Data by default, Sync in any letter case, anything else refused at start', () => {
  expect(hubConfigFromEnv({}).dataPortState).toBe('Data');
  expect(hubConfigFromEnv({ DEVICELAB_DATA_PORT_STATE: 'sync' }).dataPortState).toBe('Sync');
  expect(() => hubConfigFromEnv({ DEVICELAB_DATA_PORT_STATE: 'Charge' }))
    .toThrow("DEVICELAB_DATA_PORT_STATE must be Data or Sync, got 'Charge'");
});

describe('a hub started with DEVICELAB_DATA_PORT_STATE=Sync', () => {
  let database: TestDatabase;
  let hub: RunningHub;
  let dataDir: string;
  const token = '6e1d9f1f-9b54-4b8f-8f72-4a4b9e3c2d11';
  const call = async (pathAndQuery: string, init: RequestInit = {}) => (await fetch(`${hub.url}/apiv1${pathAndQuery}`, {
    ...init, headers: { ...init.headers, authorization: `Basic ${Buffer.from(`admin:${token}`).toString('base64')}` },
  })).json();

  beforeAll(async () => {
    database = await createTestDatabase({ maxConnections: 2 });
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'devicelab-port-state-'));
    hub = await startHub({ ...hubConfigFromEnv({ DEVICELAB_DATA_PORT_STATE: 'Sync' }), port: 0, host: '127.0.0.1',
      linkPort: 0, databaseUrl: database.url, dataDir, adminToken: token });
  }, 60_000);
  afterAll(async () => {
    await hub?.stop();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('reports Sync until /Settings stores a choice, which then wins', async () => {
    expect(await call('/Settings')).toMatchObject({ isSuccess: true, data: { dataPortState: 'Sync' } });
    expect(await call('/Settings?update', { method: 'POST', body: '{"dataPortState":"Data"}',
      headers: { 'content-type': 'application/json' } })).toEqual({ isSuccess: true });
    expect(await call('/Settings')).toMatchObject({ data: { dataPortState: 'Data' } });
  });
});
