/**
 * The gateway's link channels on their own: each is given a session whose messages the test reads, instead of a
 * hub (the wire is tested against the hub's real link server in hub-link.test.ts).
 */
import type { GatewayMessage, Welcome } from '@devicelab/proto';
import { AccessChannel } from '../../src/link/channels/access';
import type { HubConnection, LinkClient, LinkSession } from '../../src/link/channels/channel';
import { InventoryChannel } from '../../src/link/channels/inventory';
import { DriverRegistry } from '../../src/drivers/registry';
import type { DeviceDriver } from '../../src/drivers/device-driver';
import { createLogger } from '@devicelab/shared';

/** A verified session whose writes are kept. */
function recordingSession() {
  const sent: GatewayMessage[] = [];
  const session: LinkSession & { sent: GatewayMessage[] } = {
    sent,
    client: undefined as unknown as LinkClient,
    send: (message) => sent.push(message) > 0,
  };
  return session;
}

/** The link as a channel sees it, its current session being `current` (none when undefined). */
function connection(current: () => ReturnType<typeof recordingSession> | undefined): HubConnection {
  return {
    send: (message) => current()?.send(message) ?? false,
    metadata: () => { throw new Error('no calls in these tests'); },
    client: () => { throw new Error('no calls in these tests'); },
    emit: () => false,
  };
}

const welcome: Welcome = { hubProof: Buffer.alloc(32), heartbeatIntervalMs: 1_000, retentions: [{ vendorUniqueIdentifier: 'dev-1', retainId: 'retain-1' }] };
const logger = createLogger('channels-test', 'silent');

describe('gateway access channel', () => {
  it('takes the retains of Welcome and each Retention for its tickets, and without adb endpoints answers a retain at once with no port', () => {
    const session = recordingSession();
    const access = new AccessChannel(connection(() => session), { logger });
    const handlers = access.open(session, welcome);
    expect(access.tickets.retainOf('dev-1')).toBe('retain-1');
    handlers.retention!({ vendorUniqueIdentifier: 'dev-1', retainId: 'retain-2' });
    expect(access.tickets.retainOf('dev-1')).toBe('retain-2');
    expect(session.sent).toEqual([
      { body: 'accessEndpoint', accessEndpoint: { vendorUniqueIdentifier: 'dev-1', retainId: 'retain-2', port: 0 } },
    ]);
  });

  it("resolves an AccessSync when the hub's answer comes, or when the session closes first, and at once without a session", async () => {
    let current: ReturnType<typeof recordingSession> | undefined = recordingSession();
    const access = new AccessChannel(connection(() => current), { logger });
    const handlers = access.open(current, welcome);
    const states: string[] = [];
    const answered = access.sync().then(() => states.push('answered'));
    const unanswered = access.sync().then(() => states.push('closed'));
    const [first, second] = current.sent.map((message) => (message.body === 'accessSync' ? message.accessSync.id : -1));
    expect(second).toBe(first + 1);
    handlers.accessSync!({ id: first });
    await answered;
    expect(states).toEqual(['answered']);

    access.closed(); // the session closed before the hub answered the second one
    await unanswered;
    expect(states).toEqual(['answered', 'closed']);

    current = undefined;
    await access.sync(); // nothing to wait for: what is known here decides
  });
});

describe('gateway inventory channel', () => {
  it('sends a full snapshot when a hub is verified and whenever it asks, and deltas on the current session', () => {
    const devices = [{ vendorUniqueIdentifier: 'dev-1', operatingSystem: 'Android', readiness: 'Ready' }];
    const driver = { platform: 'Android', snapshot: () => devices } as unknown as DeviceDriver;
    const session = recordingSession();
    const inventory = new InventoryChannel(connection(() => session), new DriverRegistry([driver]));
    const handlers = inventory.open(session);
    handlers.inventoryRequest!({});
    inventory.deviceRemoved('dev-1');
    expect(session.sent).toEqual([
      { body: 'snapshot', snapshot: { devices } },
      { body: 'snapshot', snapshot: { devices } },
      { body: 'deviceRemoved', deviceRemoved: { vendorUniqueIdentifier: 'dev-1' } },
    ]);
  });
});

describe('gateway access channel: tunnels by service', () => {
  /** A session whose Tunnel calls record the frames written to them. */
  function tunnelSession() {
    const frames: unknown[] = [];
    const call = { on: () => call, write: (frame: unknown) => frames.push(frame) > 0, end: () => frames.push('end') };
    const session = { ...recordingSession(), client: { Tunnel: () => call } as unknown as LinkClient };
    const link: HubConnection = { ...connection(() => session), metadata: () => undefined as never };
    return { session, link, frames };
  }

  it("hands a tunnel to the handler of its service, and refuses one whose service nobody serves; '' stays the access endpoint", () => {
    const { session, link, frames } = tunnelSession();
    const handled: string[] = [];
    const access = new AccessChannel(link, { logger, tunnelServices: { automation: { open: (request) => { handled.push(request.tunnelId); } } } });
    const handlers = access.open(session, welcome);
    const request = { vendorUniqueIdentifier: 'dev-1', remoteAddress: '', userLogin: '' };
    handlers.openTunnel!({ ...request, tunnelId: 't-1', service: 'automation' });
    expect(handled).toEqual(['t-1']);
    expect(frames).toEqual([]);
    handlers.openTunnel!({ ...request, tunnelId: 't-2', service: 'screen' });
    handlers.openTunnel!({ ...request, tunnelId: 't-3', service: 'toString' });
    expect(frames).toEqual([
      { tunnelId: 't-2', error: "The gateway refuses the connection: it serves no 'screen' tunnels." }, 'end',
      { tunnelId: 't-3', error: "The gateway refuses the connection: it serves no 'toString' tunnels." }, 'end',
    ]);
    // The access endpoint's path as before: without adb endpoints or usbmux, nothing is opened.
    handlers.openTunnel!({ ...request, tunnelId: 't-4', service: '' });
    expect(handled).toEqual(['t-1']);
    expect(frames).toHaveLength(4);
  });
});
