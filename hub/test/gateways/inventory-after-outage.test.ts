/**
 * Gateway reports made while PostgreSQL is away are not lost: a device unplugged during an outage
 * is Offline once the database is back, and cannot be retained. The PostgreSQL here is an embedded one this test
 * starts, stops and starts again on the same port and data.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { startHolder, stopHolder, type Holder } from '../support/embedded-postgres-process';
import { startTestLab, waitFor, type TestLab } from '../support/lab';

interface WireDevice { id: string; serialNumber?: string; vendorUniqueIdentifier: string; availability: string }

let pgDir: string;
let postgres: Holder;
let lab: TestLab;

beforeAll(async () => {
  pgDir = mkdtempSync(path.join(os.tmpdir(), 'devicelab-outage-'));
  postgres = await startHolder(pgDir);
  lab = await startTestLab({ androidCount: 2, databaseUrl: postgres.report.url, logger: pino({ level: 'silent' }) });
}, 120_000);

afterAll(async () => {
  await lab?.stop();
  if (postgres) await stopHolder(postgres);
  rmSync(pgDir, { recursive: true, force: true });
}, 60_000);

async function deviceBySerial(serial: string): Promise<WireDevice> {
  const devices = await (await lab.api(lab.admin, '/Device')).json() as WireDevice[];
  return devices.find((d) => d.serialNumber === serial)!;
}

test('a device unplugged while PostgreSQL is away is Offline once it is back, and cannot be retained', async () => {
  const [gone, staying] = lab.devices;
  const goneDevice = await deviceBySerial(gone.serial);
  expect(goneDevice.availability).toBe('Online');

  await stopHolder(postgres);
  await lab.world.unplug(gone.serial);
  // The gateway has seen it go (and told the hub, which could not record it).
  await waitFor(async () => !lab.gateway.drivers.snapshot().some((d) => d.vendorUniqueIdentifier === goneDevice.vendorUniqueIdentifier),
    15_000, 'the gateway to drop the unplugged device');
  await new Promise((resolve) => setTimeout(resolve, 500));
  postgres = await startHolder(pgDir, `--port=${postgres.report.port}`);

  await waitFor(async () => (await deviceBySerial(gone.serial)).availability === 'Offline', 20_000, 'the unplugged device Offline');
  expect((await deviceBySerial(staying.serial)).availability).toBe('Online');
  const retain = await (await lab.api(lab.admin, `/Device?action=retain&id=${goneDevice.id}`, { method: 'POST' })).json();
  expect(retain).toEqual({ isSuccess: false, errorMessage: 'Device is offline.', errorCode: 'DEVICE_UNAVAILABLE' });
}, 120_000);

test('a gateway that disconnects while PostgreSQL is away has its devices Offline once it is back', async () => {
  const staying = lab.devices[1];
  expect((await deviceBySerial(staying.serial)).availability).toBe('Online');

  await stopHolder(postgres);
  await lab.stopGateway();
  await waitFor(async () => lab.hub.gateways.connectedGateways().length === 0, 10_000, 'the hub to see the gateway gone');
  postgres = await startHolder(pgDir, `--port=${postgres.report.port}`);

  await waitFor(async () => (await deviceBySerial(staying.serial)).availability === 'Offline', 20_000, 'the gateway\'s device Offline');
  await lab.restartGateway();
  await waitFor(async () => (await deviceBySerial(staying.serial)).availability === 'Online', 30_000, 'the device Online again');
}, 120_000);
