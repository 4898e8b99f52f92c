/**
 * The hub's link channels one by one, each in a session driven message by message (link-session-harness.ts: the
 * real session core and channels on a real database, no gRPC, no gateway, no adb server).
 */
import http from 'node:http';
import type { DeviceState, UsbHubReport } from '@devicelab/proto';
import { commandsChannel } from '../../src/gateways/channels/commands';
import { accessChannel } from '../../src/gateways/channels/access';
import { automationChannel } from '../../src/gateways/channels/automation';
import { inventoryChannel } from '../../src/gateways/channels/inventory';
import { metricsChannel } from '../../src/gateways/channels/metrics';
import { usbHubsChannel } from '../../src/gateways/channels/usb-hubs';
import { GatewayUnavailableError } from '../../src/gateways/gateway-directory';
import { NO_LONGER_REPORTED } from '../../src/gateways/device-inventory';
import { registerGateway } from '../../src/gateways/gateway-tokens';
import type { ChannelContext } from '../../src/gateways/link/channel';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { startSession as startHarness, type SessionHarness } from './link-session-harness';

let t: TestDatabase;
let gatewayCount = 0;

beforeAll(async () => {
  t = await createTestDatabase();
});
const started: SessionHarness[] = [];
const startSession = async (...args: Parameters<typeof startHarness>) => {
  const harness = await startHarness(...args);
  started.push(harness);
  return harness;
};
afterAll(async () => {
  for (const harness of started) harness.session.end('test over', { hubStopping: true });
  await t?.drop();
});

/** A gateway of its own per test, so no test sees another's devices. */
async function newGateway(): Promise<string> {
  gatewayCount += 1;
  const name = `channels-${gatewayCount}`;
  await registerGateway(t.db, name);
  return name;
}

const ready = (vendorUniqueIdentifier: string, extra: Partial<DeviceState> = {}): DeviceState =>
  ({ vendorUniqueIdentifier, operatingSystem: 'Android', readiness: 'Ready', model: 'Pixel 7', ...extra });
const deviceRow = (vendorUniqueIdentifier: string) => t.db.selectFrom('devices')
  .select(['availability', 'readiness_detail', 'installed_packages']).where('vendor_unique_identifier', '=', vendorUniqueIdentifier)
  .executeTakeFirst();
/** Lets every promise callback that is ready run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));
const readLog = { action: 'readLog', readLog: { maxLines: 1 } } as const;

describe('inventory channel', () => {
  it('records a snapshot and its deltas, and routes commands to exactly the devices the gateway reports', async () => {
    const name = await newGateway();
    const link = await startSession(t.db, name, (ctx) => [inventoryChannel(ctx), commandsChannel(ctx)]);
    await link.hello();
    link.receive({ body: 'snapshot', snapshot: { devices: [ready(`${name}-a`), ready(`${name}-b`)] } });
    await link.writes.recorded(link.session.gatewayId);
    expect(await deviceRow(`${name}-a`)).toMatchObject({ availability: 'Online' });
    expect(link.sessions.holding(`${name}-b`)).toBe(link.session);

    link.receive({ body: 'deviceRemoved', deviceRemoved: { vendorUniqueIdentifier: `${name}-a` } });
    await link.writes.recorded(link.session.gatewayId);
    expect(await deviceRow(`${name}-a`)).toMatchObject({ availability: 'Offline', readiness_detail: NO_LONGER_REPORTED });
    link.receive({ body: 'snapshot', snapshot: { devices: [ready(`${name}-c`)] } });
    await link.writes.recorded(link.session.gatewayId);
    expect(await deviceRow(`${name}-b`)).toMatchObject({ availability: 'Offline', readiness_detail: 'Not reported by its gateway' });
    await expect(link.directory.sendCommand(`${name}-b`, readLog, 1_000)).rejects.toBeInstanceOf(GatewayUnavailableError);
    void link.directory.sendCommand(`${name}-c`, readLog, 1_000).catch(() => undefined);
    expect(await link.next('command', 0)).toMatchObject({ vendorUniqueIdentifier: `${name}-c`, action: 'readLog' });
    expect(link.failures).toEqual([]);
  });
});

describe('commands channel', () => {
  it('answers each command with the result of its id; only a progress within 0..99 reaches the caller', async () => {
    const name = await newGateway();
    const link = await startSession(t.db, name, (ctx) => [inventoryChannel(ctx), commandsChannel(ctx)]);
    await link.hello();
    link.receive({ body: 'deviceUpdate', deviceUpdate: ready(`${name}-a`) });
    const progress: number[] = [];
    const first = link.directory.sendCommand(`${name}-a`, readLog, 10_000, (percent) => progress.push(percent));
    const firstCommand = await link.next('command', 0);
    const secondAt = link.sent.length;
    const second = link.directory.sendCommand(`${name}-a`, readLog, 10_000);
    const secondCommand = await link.next('command', secondAt);
    for (const percent of [10, 100, -1, 2.5, 40]) {
      link.receive({ body: 'commandProgress', commandProgress: { commandId: firstCommand.commandId, percent } });
    }
    link.receive({ body: 'commandResult', commandResult: { commandId: secondCommand.commandId, ok: true, errorMessage: '', errorCode: '', text: 'second' } });
    link.receive({ body: 'commandResult', commandResult: { commandId: firstCommand.commandId, ok: true, errorMessage: '', errorCode: '', text: 'first' } });
    expect((await first).text).toBe('first');
    expect((await second).text).toBe('second');
    expect(progress).toEqual([10, 40]);
  });

  it("answers a result that carries the device's new state only once that state is recorded", async () => {
    const name = await newGateway();
    const link = await startSession(t.db, name, (ctx) => [inventoryChannel(ctx), commandsChannel(ctx)]);
    await link.hello();
    link.receive({ body: 'snapshot', snapshot: { devices: [ready(`${name}-a`)] } });
    const install = link.directory.sendCommand(`${name}-a`, {
      action: 'install', install: { blobSha256: 'ab'.repeat(32), applicationIdentifier: 'com.example.app', force: false },
    }, 10_000);
    const { commandId } = await link.next('command', 0);
    const installed = ready(`${name}-a`, { packages: [{ identifier: 'com.example.app', version: '1.0', buildVersion: '1', system: false }] });
    link.receive({ body: 'commandResult', commandResult: { commandId, ok: true, errorMessage: '', errorCode: '', text: '', device: installed } });
    await install;
    expect((await deviceRow(`${name}-a`))?.installed_packages).toEqual([expect.objectContaining({ identifier: 'com.example.app' })]);
  });

  it('fails the pending commands of a session that ends, but leaves them unanswered when the hub stops', async () => {
    const name = await newGateway();
    const lost = await startSession(t.db, name, (ctx) => [inventoryChannel(ctx), commandsChannel(ctx)]);
    await lost.hello();
    lost.receive({ body: 'deviceUpdate', deviceUpdate: ready(`${name}-a`) });
    const pending = lost.directory.sendCommand(`${name}-a`, readLog, 10_000);
    lost.session.end('stream closed');
    await expect(pending).rejects.toThrow(`Gateway ${name} disconnected (stream closed).`);

    const stopping = await startSession(t.db, name, (ctx) => [inventoryChannel(ctx), commandsChannel(ctx)]);
    await stopping.hello();
    stopping.receive({ body: 'deviceUpdate', deviceUpdate: ready(`${name}-a`) });
    let answered = false;
    void stopping.directory.sendCommand(`${name}-a`, readLog, 10_000).finally(() => { answered = true; });
    stopping.session.end('hub stopping', { hubStopping: true });
    await settle();
    expect(answered).toBe(false); // its async job stays running for the next start to reconcile
  });
});

describe('access channel', () => {
  it("holds Retentions sent before Welcome and writes them right behind it, with an AccessSync behind them", async () => {
    const name = await newGateway();
    const link = await startSession(t.db, name, (ctx) => [accessChannel(ctx)]);
    const welcome = link.hello();
    // Established at Hello: a retain committed while Welcome's retains are read reaches this gateway after it.
    link.directory.notifyRetention({ vendorUniqueIdentifier: `${name}-a`, retainId: 'retain-1' });
    link.receive({ body: 'accessSync', accessSync: { id: 7 } });
    expect(link.sent).toEqual([]);
    await welcome;
    await link.next('accessSync', 0);
    expect(link.sent.map((message) => message.body)).toEqual(['welcome', 'retention', 'accessSync']);
    expect(link.sent[2]).toMatchObject({ accessSync: { id: 7 } });
  });

  it("names the port an endpoint kept at once for the next retain, and only the gateway's answer when confirmed", async () => {
    const name = await newGateway();
    const link = await startSession(t.db, name, (ctx) => [inventoryChannel(ctx), accessChannel(ctx)]);
    await link.hello();
    const device = `${name}-a`;
    link.receive({ body: 'deviceUpdate', deviceUpdate: ready(device) });
    const answer = link.directory.accessPort(device, 'retain-1', 10_000);
    link.receive({ body: 'accessEndpoint', accessEndpoint: { vendorUniqueIdentifier: device, retainId: 'retain-1', port: 7401 } });
    expect(await answer).toBe(7401);
    // Released, the endpoint keeps its port for the next retain.
    link.receive({ body: 'accessEndpoint', accessEndpoint: { vendorUniqueIdentifier: device, retainId: '', port: 7401 } });
    expect(await link.directory.accessPort(device, 'retain-2', 0)).toBe(7401);
    expect(await link.directory.accessPort(device, 'retain-2', 0, true)).toBeUndefined();
    const confirmed = link.directory.accessPort(device, 'retain-2', 10_000, true);
    link.receive({ body: 'accessEndpoint', accessEndpoint: { vendorUniqueIdentifier: device, retainId: 'retain-2', port: 7401 } });
    expect(await confirmed).toBe(7401);
    expect(await link.directory.accessPort('no-such-device', 'retain-2', 10_000)).toBeUndefined();
  });
});

describe('USB hubs channel', () => {
  const report = (milliamps: number, state: string): UsbHubReport => ({
    serialNumber: 'CB-1', name: 'hub', location: '', description: '', model: 'ThunderSync3-16', firmware: '', firmwareDate: '',
    uptimeSeconds: 1, fiveVoltNow: 5, fiveVoltMin: 5, fiveVoltMax: 5, errorMessage: '', isErrored: false, kind: 'cambrionix',
    ports: [{ portNumber: 1, name: '', location: '', deviceSerialNumber: '', milliamps, state, flags: [], chargingSeconds: 0, chargingProfile: '' }],
  });
  const recordedMilliamps = async (name: string) => (await t.db.selectFrom('gateways').select('last_usb_hubs')
    .where('name', '=', name).executeTakeFirstOrThrow()).last_usb_hubs?.[0]?.ports[0]?.milliamps;

  it('records a report when a port changes, not when only telemetry does, and routes hub commands to its gateway', async () => {
    const name = await newGateway();
    const link = await startSession(t.db, name, (ctx) => {
      const commands = commandsChannel(ctx);
      return [commands, usbHubsChannel(ctx, commands)];
    });
    await link.hello();
    link.receive({ body: 'usbHubs', usbHubs: { hubs: [report(100, 'sync')] } });
    link.receive({ body: 'usbHubs', usbHubs: { hubs: [report(250, 'sync')] } });
    await link.writes.recorded(link.session.gatewayId);
    expect(await recordedMilliamps(name)).toBe(100);
    expect(link.session.describe().usbHubs[0].ports[0].milliamps).toBe(250); // live for GET /Gateway
    link.receive({ body: 'usbHubs', usbHubs: { hubs: [report(300, 'off')] } });
    await link.writes.recorded(link.session.gatewayId);
    expect(await recordedMilliamps(name)).toBe(300);

    const action = { action: 'setUsbPortState', setUsbPortState: { hubSerialNumber: 'CB-1', portNumber: 1, state: 'sync' } } as const;
    void link.directory.sendUsbHubCommand('CB-1', action, 10_000).catch(() => undefined);
    expect(await link.next('command', 0)).toMatchObject({ vendorUniqueIdentifier: '', action: 'setUsbPortState' });
    await expect(link.directory.sendUsbHubCommand('CB-9', action, 10_000)).rejects.toBeInstanceOf(GatewayUnavailableError);
  });
});

describe('metrics channel', () => {
  it('sends MetricsSettings after Welcome, stores a batch behind the device reports before it, then acknowledges it', async () => {
    const name = await newGateway();
    let store: ChannelContext['metrics'] | undefined;
    const link = await startSession(t.db, name, (ctx) => {
      store = ctx.metrics;
      return [inventoryChannel(ctx), metricsChannel(ctx)];
    });
    await link.hello();
    expect(await link.next('metricsSettings', 0)).toEqual({ disabledVendorUniqueIdentifiers: expect.any(Array) });
    expect(link.sent.map((message) => message.body)).toEqual(['welcome', 'metricsSettings']);

    // The batch names a device reported just before it: stored only if its row exists by then.
    const field = `Channel Test ${name}`;
    link.receive({ body: 'deviceUpdate', deviceUpdate: ready(`${name}-a`) });
    link.receive({ body: 'metrics', metrics: { sequence: 3, epoch: `epoch-${name}`, droppedRows: 0, rows: [{
      vendorUniqueIdentifier: `${name}-a`, table: 'sample', timeUs: Date.now() * 1000, values: [{ field, value: 'number', number: 5 }],
    }] } });
    expect(await link.next('metricsAck', 0)).toEqual({ sequence: 3 });
    const catalog = await store!.catalog(true);
    expect(catalog.get('sample')?.map((known) => known.field)).toContain(field);
  });
});

describe('automation channel', () => {
  it("keeps each session's AutomationReport for automationInfo, and reads a device's log with a ReadAutomationLog command", async () => {
    const name = await newGateway();
    const link = await startSession(t.db, name, (ctx) => {
      const commands = commandsChannel(ctx);
      return [inventoryChannel(ctx), commands, automationChannel(ctx, commands, () => Promise.reject(new GatewayUnavailableError('no tunnels here')))];
    });
    await link.hello();
    expect(link.directory.automationInfo()).toEqual([]); // connected, nothing reported yet (an older gateway)
    link.receive({ body: 'automationReport', automationReport: {
      path: '/opt/gateway', version: '3.8.0', pathHash: 'ab'.repeat(32), configurationError: 'adb (adb) is not installed',
      drivers: [{ name: 'uiautomator2', version: '8.7.0', automationName: 'UiAutomator2' }],
    } });
    expect(link.directory.automationInfo()).toEqual([{
      gatewayName: name, path: '/opt/gateway', version: '3.8.0', pathHash: 'ab'.repeat(32),
      drivers: [{ name: 'uiautomator2', version: '8.7.0' }], configurationError: 'adb (adb) is not installed',
    }]);
    link.receive({ body: 'deviceUpdate', deviceUpdate: ready(`${name}-a`) });
    const log = link.directory.automationLog(`${name}-a`, { sessionId: 's-1' });
    const command = await link.next('command', 0);
    expect(command).toMatchObject({ vendorUniqueIdentifier: `${name}-a`, action: 'readAutomationLog', readAutomationLog: { sessionId: 's-1', requestId: '' } });
    link.receive({ body: 'commandResult', commandResult: { commandId: command.commandId, ok: true, errorMessage: '', errorCode: '', text: '{"message":"x"}\n' } });
    expect(await log).toBe('{"message":"x"}\n');
    const at = link.sent.length;
    const refused = link.directory.automationLog(`${name}-a`, {});
    const second = await link.next('command', at);
    link.receive({ body: 'commandResult', commandResult: { commandId: second.commandId, ok: false, errorMessage: 'Device gone', errorCode: 'DEVICE_NOT_CONNECTED', text: '' } });
    await expect(refused).rejects.toThrow(/Reading the automation server log .*Device gone/);
    await expect(new Promise((resolve, reject) => {
      const agent = link.directory.automationAgent(`${name}-a`);
      http.get({ host: 'x', path: '/status', agent }, resolve).on('error', reject);
    })).rejects.toThrow(GatewayUnavailableError);
    link.session.end('gone', { hubStopping: false });
    expect(link.directory.automationInfo()).toEqual([]);
  });
});
