/**
 * The automation tunnels' HTTP agent: requests to a real HTTP server through tunnels whose far end is joined to it
 * by the shared byte pump, as the gateway joins a tunnel to a device's Appium server. The tunnel itself is an
 * object-mode stream of TunnelFrames standing in for the gRPC call (same frames, same backpressure).
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { Duplex } from 'node:stream';
import type { TunnelFrame } from '@devicelab/proto';
import { frameStreamEnd, pumpBytes, socketEnd } from '@devicelab/shared';
import { AutomationAgent, TunnelSocket } from '../../src/gateways/channels/automation-agent';
import type { DeviceTunnel } from '../../src/gateways/gateway-directory';

/** Two ends of one tunnel: what one writes the other reads. `sent` records the frames the hub's end wrote. */
function tunnelPair(): { hub: DeviceTunnel; far: Duplex; sent: TunnelFrame[] } {
  const sent: TunnelFrame[] = [];
  let far!: Duplex;
  const hub = new Duplex({
    objectMode: true,
    read: () => undefined,
    write(frame: TunnelFrame, _encoding, done) {
      sent.push(frame);
      far.push(frame);
      done();
    },
    final(done) {
      far.push(null);
      done();
    },
  });
  far = new Duplex({
    objectMode: true,
    read: () => undefined,
    write(frame: TunnelFrame, _encoding, done) {
      hub.push(frame);
      done();
    },
    final(done) {
      hub.push(null);
      done();
    },
  });
  return { hub: hub as unknown as DeviceTunnel, far, sent };
}

let server: http.Server;
let port: number;
beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => res.setHeader('content-type', 'application/json').end(JSON.stringify({ method: req.method, body: Buffer.concat(chunks).toString() })));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('automation agent', () => {
  it("sends a request's head and body as one tunnel frame and reads the answer back through the same tunnel", async () => {
    const tunnels: Array<ReturnType<typeof tunnelPair>> = [];
    const agent = new AutomationAgent(async () => {
      const pair = tunnelPair();
      const socket = net.connect({ host: '127.0.0.1', port, allowHalfOpen: true });
      pumpBytes(socketEnd(socket), frameStreamEnd(pair.far, () => pair.far.destroy()));
      tunnels.push(pair);
      return pair.hub;
    });
    const call = (method: string, body?: string) => new Promise<{ status?: number; text: string }>((resolve, reject) => {
      const req = http.request({ agent, host: 'appium', method, path: '/session/s-1/element', headers: body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {} }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString() }));
      });
      req.on('error', reject);
      req.end(body);
    });
    const body = JSON.stringify({ using: 'xpath', value: '//android.widget.Button' });
    expect(await call('POST', body)).toEqual({ status: 200, text: JSON.stringify({ method: 'POST', body }) });
    expect(tunnels).toHaveLength(1);
    expect(tunnels[0].sent).toHaveLength(1);
    expect(tunnels[0].sent[0].data?.toString()).toMatch(new RegExp(`^POST /session/s-1/element HTTP/1.1\r\n[^]*\r\n\r\n${body.replace(/[/[\]]/g, '\\$&')}$`));
    // The next request takes the kept tunnel.
    expect(await call('GET')).toEqual({ status: 200, text: JSON.stringify({ method: 'GET', body: '' }) });
    expect(tunnels).toHaveLength(1);
    expect(tunnels[0].sent).toHaveLength(2);
    agent.destroy();
  });

  describe('tunnel socket idle timeout', () => {
    // Timers and the clock are faked; the streams' own ticks run as usual.
    beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] }));
    afterEach(() => jest.useRealTimers());

    const settled = () => new Promise((resolve) => setImmediate(resolve));

    it("times out only after `timeout` without bytes either way, and not after it is set to 0", async () => {
      const { hub, far } = tunnelPair();
      const socket = new TunnelSocket(hub);
      socket.on('data', () => undefined);
      const timedOut = jest.fn();
      socket.setTimeout(1000, timedOut);
      jest.advanceTimersByTime(600);
      far.write({ data: Buffer.from('HTTP/1.1 200 OK\r\n') }); // bytes in: idle again from here
      await settled();
      jest.advanceTimersByTime(600);
      socket.write(Buffer.from('GET / HTTP/1.1\r\n\r\n')); // bytes out, likewise
      await settled();
      jest.advanceTimersByTime(900);
      expect(timedOut).not.toHaveBeenCalled();
      jest.advanceTimersByTime(200);
      expect(timedOut).toHaveBeenCalledTimes(1);

      const again = jest.fn();
      socket.setTimeout(1000, again);
      socket.setTimeout(0, again);
      jest.advanceTimersByTime(5000);
      expect(again).not.toHaveBeenCalled();
      socket.destroy();
    });
  });
});
