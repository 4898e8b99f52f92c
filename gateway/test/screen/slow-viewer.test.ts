/**
 * A screen viewer whose link takes frames slowly (a loaded hub): the gateway's screen tunnel keeps at most two frames
 * handed to the call and one waiting, the newest, whatever the number of frames the device makes meanwhile; once
 * the link takes them again the viewer gets the newest frame. The call is a stream whose writes complete only when
 * the test lets them, so the far end's pace is exact; the capture is a simulated device's through the real adb server.
 */
import { Duplex } from 'node:stream';
import { specFromPreset } from '@devicelab/labsim';
import { createLogger, isScreenFrame } from '@devicelab/shared';
import type { TunnelCall } from '../../src/access/hub-tunnel';
import { DeviceScreens } from '../../src/screen/device-screens';
import { screenTunnelCounts, screenTunnels } from '../../src/screen/screen-tunnels';
import { eventually } from '../support/eventually';
import { startDriverLab, type DriverLab } from '../support/driver-lab';

jest.setTimeout(120_000);

let lab: DriverLab;
let screens: DeviceScreens;
const spec = specFromPreset('moto-g9-play', 3);

/** A call whose frame writes finish only when `release()` says so; everything written is kept in order. */
class SlowCall extends Duplex {
  written: Buffer[] = [];
  private held: (() => void)[] = [];
  slow = false;
  constructor() {
    super({ objectMode: true, highWaterMark: 1 << 20 });
  }
  override _write(frame: { data?: Buffer }, _encoding: string, done: () => void): void {
    if (frame.data) this.written.push(frame.data);
    if (this.slow && frame.data && isScreenFrame(frame.data)) this.held.push(done);
    else done();
  }
  override _read(): void {}
  get pending(): number {
    return this.held.length;
  }
  release(): void {
    this.slow = false;
    for (const done of this.held.splice(0)) done();
  }
  cancel(): void {
    this.destroy();
  }
}

beforeAll(async () => {
  lab = await startDriverLab();
  await lab.world.addAndroidDevice(spec);
  const id = lab.world.device(spec.serial).adbSerial;
  await eventually(() => lab.recorder.latest(id)?.readiness === 'Ready', 60_000);
  screens = new DeviceScreens(() => lab.driver.screen, { logger: createLogger('test', 'silent'), lingerMs: 100 });
}, 120_000);
afterAll(async () => {
  await screens?.stop();
  await lab?.stop();
}, 60_000);

const frames = (call: SlowCall) => call.written.filter(isScreenFrame);

test('a link that does not take frames gets the newest one, never a backlog', async () => {
  const id = lab.world.device(spec.serial).adbSerial;
  const sim = lab.world.device(spec.serial).screen;
  const service = screenTunnels(screens, createLogger('test', 'silent'));
  service.retentions?.([], true);
  const slow = new SlowCall();
  const brisk = new SlowCall();
  for (const [n, call] of [[1, slow], [2, brisk]] as const) {
    service.open({ tunnelId: `t${n}`, vendorUniqueIdentifier: id, remoteAddress: 'test', userLogin: 'viewer', viewOnly: true, retainId: '' },
      () => call as unknown as TunnelCall);
  }
  await eventually(() => frames(slow).length > 0 && frames(brisk).length > 0, 30_000);
  slow.slow = true;
  const dropped = screenTunnelCounts.framesDropped;
  const slowBefore = frames(slow).length;
  const briskBefore = frames(brisk).length;
  // The device's screen keeps changing (a finger dragging across it) until the brisk viewer has seen 8 new frames.
  let step = 0;
  sim.touch(0, 'down', 300, 600);
  while (frames(brisk).length - briskBefore < 8) {
    step++;
    sim.touch(0, 'move', 100 + (step * 37) % 500, 300 + (step * 53) % 900);
    await new Promise((r) => setTimeout(r, 40));
  }
  sim.touch(0, 'up', 300, 600);
  // Two frames were handed to the slow call; the rest were dropped but for the one waiting.
  // (writableLength: the frame being written and the one queued behind it.)
  expect(slow.writableLength).toBe(2);
  expect(screenTunnelCounts.framesDropped - dropped).toBeGreaterThanOrEqual(8 - 3);
  const newest = frames(brisk).at(-1);
  slow.release();
  await eventually(() => frames(slow).at(-1)?.equals(newest!), 10_000);
  for (const call of [slow, brisk]) call.end();
});
