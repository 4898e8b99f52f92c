/**
 * Two gateway processes started with the same name and token (a copied unit file, a second host set up from the
 * first): the second is refused while the first is live, with an error that says why, and backs off; the first keeps
 * its link and its device. Once the first is hung (stream open, silent) the second takes over. OUR REAL gateway, in
 * front of a simulated device.
 */
import { specFromPreset } from '@devicelab/labsim';
import { startLinkLab, waitForAvailability, waitUntil, type LinkLab } from './real-gateway-lab';

const HEARTBEAT_MS = 200;
let lab: LinkLab;

beforeAll(async () => {
  lab = await startLinkLab({ gatewayName: 'rack-dup', devices: [specFromPreset('moto-g9-play', 5)], heartbeatIntervalMs: HEARTBEAT_MS });
}, 60_000);

afterAll(() => lab?.stop(), 30_000);

it('refuses a second live gateway of the same name, which backs off; it takes over once the first is hung', async () => {
  const [device] = lab.devices;
  const first = lab.spawnGatewayDaemon();
  await waitForAvailability(lab, [device.vui], 'Online', 60_000).catch((err: Error) => {
    throw new Error(`${err.message}\ngateway daemon output:\n${first.output()}`);
  });
  const [session] = lab.link.directory.connectedGateways();

  const second = await lab.startGateway({ backoff: { initialMs: 100, maxMs: 2_000 } });
  const retries = () => second.logs.filter((record) => record.msg === 'reconnecting to the hub').map((record) => record.delayMs as number);
  await waitUntil(() => retries().length >= 4, 30_000, 'the second gateway to be refused four times');

  // The first kept its one session throughout; the second never got one.
  expect(lab.link.directory.connectedGateways()).toEqual([expect.objectContaining({ name: 'rack-dup', connectedAt: session.connectedAt })]);
  expect(first.logs().filter((record) => record.msg === 'link to the hub lost')).toEqual([]);
  expect(second.connections).toBe(0);
  const refusal = second.logs.find((record) => record.msg === 'link to the hub lost');
  expect(refusal?.reason).toMatch(/^ALREADY_EXISTS: gateway rack-dup is already connected .* another gateway process runs with this name and token/);
  // Backing off: each wait at least as long as the one before, doubling from the first.
  const delays = retries().slice(0, 4);
  expect(delays).toEqual([...delays].sort((a, b) => a - b));
  expect(delays[3]).toBeGreaterThanOrEqual(4 * delays[0]);
  // Device commands go through meanwhile.
  expect((await lab.link.directory.sendCommand(device.vui, { action: 'readLog', readLog: { maxLines: 1 } }, 10_000)).ok).toBe(true);

  // The first hangs: its silence lets the second in, and the device stays with the lab.
  first.child.kill('SIGSTOP');
  try {
    await waitUntil(() => second.connections === 1, 15_000, 'the second gateway to take over the hung one');
    await waitForAvailability(lab, [device.vui], 'Online', 15_000);
    expect(lab.link.directory.connectedGateways()).toEqual([expect.objectContaining({ name: 'rack-dup' })]);
  } finally {
    await first.kill();
  }
}, 180_000);
