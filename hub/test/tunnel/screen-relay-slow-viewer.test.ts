/**
 * A viewer whose WebSocket stops reading, at the hub's screen relay: real WebSockets over loopback TCP, one viewer
 * that reads every frame and one whose socket is paused (the kernel's buffers fill, then nothing more is taken).
 * Frames go in lockstep with the reading viewer, so nothing depends on speed: the reading viewer gets every frame
 * in order, the hub keeps at most two frames queued for the stalled one whatever the number sent, and once it reads
 * again it gets the newest frame after a bounded few, not the backlog. The tunnels are streams standing for the
 * gateway's gRPC calls, fed frames as a gateway sends them.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';
import { encodeScreenControl, encodeScreenFrame, isScreenFrame } from '@devicelab/shared';
import { relayScreen, screenRelayCounts } from '../../src/tunnel/screen-relay';
import type { DeviceTunnel } from '../../src/gateways/gateway-directory';

/** 512 KiB frames: the paused viewer's kernel buffers (a few MiB on loopback) hold only a few of them. */
const FRAME_BYTES = 512 * 1024;
const FRAMES = 60;

/** The hub's end of a screen tunnel: frames pushed in by the test, the viewer's input taken and kept. */
class TestTunnel extends Duplex {
  inputs: Buffer[] = [];
  constructor() {
    super({ objectMode: true });
  }
  override _read(): void {}
  override _write(frame: { data?: Buffer }, _encoding: string, done: () => void): void {
    if (frame.data) this.inputs.push(frame.data);
    done();
  }
  cancel(): void {
    this.destroy();
  }
}

const frame = (index: number): Buffer => {
  const image = Buffer.alloc(FRAME_BYTES, index & 0xff);
  image.writeUInt32BE(index, 0);
  return encodeScreenFrame(image);
};
const indexOf = (message: Buffer): number => message.readUInt32BE(1);

let server: WebSocketServer;
const relayed: { ws: WebSocket; tunnel: TestTunnel }[] = [];

beforeAll(async () => {
  server = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  server.on('connection', (ws) => {
    const tunnel = new TestTunnel();
    relayScreen(ws, tunnel as unknown as DeviceTunnel, false, () => undefined);
    relayed.push({ ws, tunnel });
  });
  await once(server, 'listening');
});
afterAll(async () => {
  for (const client of server.clients) client.terminate();
  await new Promise((resolve) => server.close(resolve));
});

async function viewer(): Promise<{ client: WebSocket; frames: number[]; controls: number }> {
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/`, { perMessageDeflate: false });
  const received = { client, frames: [] as number[], controls: 0 };
  client.on('message', (data: Buffer) => {
    if (isScreenFrame(data)) received.frames.push(indexOf(data));
    else received.controls++;
  });
  await once(client, 'open');
  return received;
}

test('a viewer that stops reading gets the newest frame, never a queue, and the reading viewer gets every frame', async () => {
  const fast = await viewer();
  const slow = await viewer();
  await new Promise<void>((resolve) => { const check = () => (relayed.length === 2 ? resolve() : setImmediate(check)); check(); });
  const [fastEnd, slowEnd] = relayed;
  // The stalled viewer's socket is not read from: its kernel buffer fills, then the hub's writes stop completing.
  slow.client.pause();
  const dropped = screenRelayCounts.framesDropped;

  let queuedMost = 0;
  for (let i = 1; i <= FRAMES; i++) {
    // A control message between frames always goes through, in order (it is small and never replaced).
    if (i === FRAMES / 2) for (const { tunnel } of relayed) tunnel.push({ data: encodeScreenControl({ t: 'pong', id: i }) });
    for (const { tunnel } of relayed) tunnel.push({ data: frame(i) });
    while (fast.frames.at(-1) !== i) await once(fast.client, 'message');
    queuedMost = Math.max(queuedMost, slowEnd.ws.bufferedAmount);
  }
  expect(fast.frames).toEqual(Array.from({ length: FRAMES }, (_, k) => k + 1));
  expect(fastEnd.ws.bufferedAmount).toBeLessThan(FRAME_BYTES);
  // At most the two frames handed to the stalled socket wait in the hub (the third waits in the relay, replaced),
  // and the one small control message.
  expect(queuedMost).toBeLessThanOrEqual(2 * (FRAME_BYTES + 16) + 64);
  expect(slowEnd.ws.bufferedAmount).toBeLessThanOrEqual(2 * (FRAME_BYTES + 16) + 64);
  expect(screenRelayCounts.framesDropped - dropped).toBeGreaterThan(FRAMES / 2);

  // Reading again, the viewer drains what the kernel held and then gets the newest frame, not the backlog.
  slow.client.resume();
  await new Promise<void>((resolve) => {
    const check = () => (slow.frames.at(-1) === FRAMES ? resolve() : setTimeout(check, 20));
    check();
  });
  expect(slow.frames.length).toBeLessThan(FRAMES / 2);
  expect([...slow.frames].sort((a, b) => a - b)).toEqual(slow.frames);
  expect(slow.controls).toBe(1);
  fast.client.close();
  slow.client.close();
});
