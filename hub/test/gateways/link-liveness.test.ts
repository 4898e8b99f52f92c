/**
 * How the hub tells a live gateway from a gone one, with OUR REAL gateway in front of a simulated device: a
 * heartbeating gateway stays connected, a hung gateway process (stream open, silent) is dropped after three
 * heartbeat intervals, and a gateway process killed with SIGKILL is noticed within 5 s.
 */
import { specFromPreset } from '@devicelab/labsim';
import {
  availabilityHistory, deviceRow, gatewayRow, sleep, startLinkLab, waitForAvailability, waitUntil,
  type GatewayDaemon, type LabDevice, type LinkLab,
} from './real-gateway-lab';

const HEARTBEAT_MS = 200;
let lab: LinkLab;
let D: LabDevice;

const row = async () => {
  const found = await deviceRow(lab, D.vui);
  if (!found) throw new Error(`no device row for ${D.vui}`);
  return found;
};

/**
 * Waits until the daemon's device is Online; shows the daemon's output when it never gets there. The daemon
 * transpiles its TypeScript sources as it starts, which takes a busy host well over 15 s.
 */
async function daemonOnline(daemon: GatewayDaemon): Promise<void> {
  await waitForAvailability(lab, [D.vui], 'Online', 60_000).catch((err: Error) => {
    throw new Error(`${err.message}\ngateway daemon output:\n${daemon.output()}`);
  });
}

beforeAll(async () => {
  lab = await startLinkLab({ gatewayName: 'lab-2', devices: [specFromPreset('moto-g9-play', 3)], heartbeatIntervalMs: HEARTBEAT_MS });
  [D] = lab.devices;
}, 60_000);

afterAll(() => lab?.stop(), 30_000);

describe('gateway liveness', () => {
  it('keeps a heartbeating gateway connected well past three heartbeat intervals', async () => {
    const gateway = await lab.startGateway();
    await waitForAvailability(lab, [D.vui], 'Online');
    const [session] = lab.link.directory.connectedGateways();
    expect(session).toBeDefined();

    await sleep(8 * HEARTBEAT_MS);
    // Still the same session: nothing but heartbeats went over the link meanwhile.
    expect(lab.link.directory.connectedGateways()).toEqual([expect.objectContaining({ name: 'lab-2', connectedAt: session.connectedAt })]);
    expect(gateway.disconnects).toBe(0);
    expect(gateway.running.link.connected).toBe(true);
    expect((await gatewayRow(lab))?.connected).toBe(true);
    expect((await row()).availability).toBe('Online');
    expect(await availabilityHistory(lab, (await row()).id)).toEqual(['Device Online']);

    await gateway.stop();
    await waitForAvailability(lab, [D.vui], 'Offline', 5_000);
  });

  it('drops a hung gateway (stream open, silent) after three heartbeat intervals; resumed, it reconnects under the same Guids', async () => {
    const daemon = lab.spawnGatewayDaemon();
    try {
      await daemonOnline(daemon);
      const before = await row();

      const hungAt = Date.now();
      daemon.child.kill('SIGSTOP');
      await waitUntil(() => lab.link.directory.connectedGateways().length === 0, 5_000, 'the hub to drop the hung gateway');
      const noticedAfter = Date.now() - hungAt;
      // Its last heartbeat went out at most one interval before it hung, so never before two intervals.
      expect(noticedAfter).toBeGreaterThanOrEqual(2 * HEARTBEAT_MS - 50);
      await waitForAvailability(lab, [D.vui], 'Offline', 2_000);
      expect(await row()).toMatchObject({ readiness: 'Offline', readiness_detail: expect.stringMatching(/^Gateway disconnected: no message for \d+ ms/) });
      // Dropped by the rule (more than three intervals of silence) as the hub measured it; how soon after that a
      // loaded machine runs the check is bounded by the 5 s wait above, not by a tighter timing guess.
      const silentFor = Number(/no message for (\d+) ms/.exec((await row()).readiness_detail ?? '')?.[1]);
      expect(silentFor).toBeGreaterThan(3 * HEARTBEAT_MS);
      // The devices go Offline first and the gateway's flag right after: wait for it, not race it.
      await waitUntil(async () => (await gatewayRow(lab))?.connected === false, 5_000, 'the gateway recorded as disconnected');

      daemon.child.kill('SIGCONT');
      await daemonOnline(daemon);
      expect((await row()).id).toBe(before.id);
      expect((await gatewayRow(lab))?.connected).toBe(true);
    } finally {
      await daemon.kill();
    }
  }, 150_000);

  it('notices a gateway process killed with SIGKILL within 5 s; a new process brings the device back under the same Guid', async () => {
    const daemon = lab.spawnGatewayDaemon();
    let restarted: GatewayDaemon | undefined;
    try {
      await daemonOnline(daemon);
      const before = await row();
      const killedAt = Date.now();
      await daemon.kill();
      await waitForAvailability(lab, [D.vui], 'Offline', 5_000);
      expect(Date.now() - killedAt).toBeLessThan(5_000);
      expect(await row()).toMatchObject({ readiness: 'Offline', readiness_detail: expect.stringMatching(/^Gateway disconnected/) });
      // The hub writes the devices Offline first and the gateway's flag right after: wait for it, not race it.
      await waitUntil(async () => (await gatewayRow(lab))?.connected === false, 5_000, 'the gateway recorded as disconnected');
      expect(lab.link.directory.connectedGateways()).toEqual([]);

      restarted = lab.spawnGatewayDaemon();
      await daemonOnline(restarted);
      expect((await row()).id).toBe(before.id);
      expect((await gatewayRow(lab))?.connected).toBe(true);
    } finally {
      await daemon.kill();
      await restarted?.kill();
    }
  }, 150_000);
});
