/**
 * A gateway given two hub replicas (`DEVICELAB_HUB=a,b`) on one PostgreSQL. Replica A is a hub process,
 * replica B the lab's hub. An app is uploaded through A; A is killed with SIGKILL; the gateway's devices are back
 * Online through B within 5 s with the same Guids, and B installs the app A received (binaries live in PostgreSQL).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { thisReplica } from '../../src/fleet/replica';
import { freePort } from '../support/adb-client';
import { startHubProcess, type HubProcess } from '../support/hub-process';
import { ADMIN_TOKEN, startTestLab, waitFor, type TestLab } from '../support/lab';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { fixture } from '../../../scripts/jest/shared-files';

const FAILOVER_LIMIT_MS = 5_000;
let database: TestDatabase;
let replicaA: HubProcess;
let replicaADir: string;
let lab: TestLab;

interface WireGateway { name: string; isConnected: boolean; hubReplica?: string }
interface WireDevice { id: string; serialNumber: string; availability: string }

beforeAll(async () => {
  database = await createTestDatabase({ maxConnections: 2 });
  replicaADir = mkdtempSync(path.join(os.tmpdir(), 'devicelab-replica-a-'));
  replicaA = await startHubProcess({ databaseUrl: database.url, dataDir: replicaADir, adminToken: ADMIN_TOKEN });
  const replicaBLinkPort = await freePort();
  lab = await startTestLab({
    databaseUrl: database.url,
    androidCount: 2,
    hubConfig: { linkPort: replicaBLinkPort },
    gatewayOptions: { hubAddress: [`127.0.0.1:${replicaA.linkPort}`, `127.0.0.1:${replicaBLinkPort}`] },
  });
}, 120_000);

afterAll(async () => {
  await lab?.stop();
  await replicaA?.stop();
  await database?.drop();
  rmSync(replicaADir, { recursive: true, force: true });
});

const throughB = async <T>(pathAndQuery: string, init?: RequestInit): Promise<T> =>
  (await lab.api(lab.admin, pathAndQuery, init)).json() as Promise<T>;
const ourGateway = async () => (await throughB<WireGateway[]>('/Gateway')).find((g) => g.name === 'lab-gateway');

it('moves to the other replica within 5 s of its replica\'s death: same Guids, Online, and installs there', async () => {
  // The gateway dialled the first address: its link is on A.
  const [replicaAId] = ((await (await replicaA.api('/Service')).json()) as { hubReplicas: { id: string }[] }).hubReplicas
    .map((r) => r.id);
  expect(replicaAId).not.toBe(thisReplica.id);
  expect(await ourGateway()).toMatchObject({ hubReplica: replicaAId });

  // An app uploaded through A...
  const form = new FormData();
  form.append('upload', new Blob([await readFile(fixture('ContactManager.apk'))]), 'ContactManager.apk');
  const uploaded = await (await replicaA.api('/Application?add&wait=true', { method: 'POST', body: form })).json() as
    { isSuccess: boolean; data: { id: string } };
  expect(uploaded.isSuccess).toBe(true);
  const before = await throughB<WireDevice[]>('/Device');
  expect(before.map((d) => d.availability)).toEqual(['Online', 'Online']);

  replicaA.child.kill('SIGKILL');
  const killedAt = Date.now();
  await replicaA.exited;
  await waitFor(async () => {
    const gateway = await ourGateway();
    if (!gateway?.isConnected || gateway.hubReplica !== thisReplica.id) return false;
    const devices = await throughB<WireDevice[]>('/Device');
    return devices.every((d) => d.availability === 'Online') && devices;
  }, 20_000, 'the gateway on replica B with its devices Online');
  const sinceKill = Date.now() - killedAt;
  expect(sinceKill).toBeLessThan(FAILOVER_LIMIT_MS);
  const after = await throughB<WireDevice[]>('/Device');
  expect(after.map((d) => [d.id, d.serialNumber]).sort()).toEqual(before.map((d) => [d.id, d.serialNumber]).sort());

  // ...installs through B, which now holds the link and reads the binary from PostgreSQL.
  const serial = lab.devices[0].serial;
  expect(await throughB(`/Application?action=install&id=${uploaded.data.id}&deviceId=${serial}&wait=true`, { method: 'POST' }))
    .toEqual({ isSuccess: true });
  const installed = await lab.world.installedPackages(serial, { thirdPartyOnly: true });
  expect(installed.map((p) => p.packageName)).toContain('com.example.android.contactmanager');
  expect(lab.gateway.link.hubAddress).toBe(`127.0.0.1:${lab.hub.linkPort}`);
}, 120_000);
