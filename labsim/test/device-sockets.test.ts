/**
 * Sockets of programs on a simulated device, reached as a user reaches them on a phone: the real adb server's
 * `adb forward tcp:<host port> localabstract:<name>` (or `tcp:<device port>`), then a TCP connection to the host
 * port. This is the path minicap, minitouch and the UiAutomator2 server are reached by.
 */
import net from 'node:net';
import { once } from 'node:events';
import type { LabWorld, SimAndroidDevice } from '../src';
import { parseSocketSpec } from '../src/android/device-sockets';
import { adbOn, startOnePixel7 } from './helpers';

let world: LabWorld;
let device: SimAndroidDevice;
let adb: ReturnType<typeof adbOn>;

beforeAll(async () => {
  ({ world, device, adb } = await startOnePixel7());
}, 60_000);
afterAll(() => world?.stop(), 60_000);

/** `adb forward tcp:0 <remote>`: the host port adb chose. */
async function forward(remote: string): Promise<number> {
  const result = await adb('forward', 'tcp:0', remote);
  expect(result.code).toBe(0);
  return Number(result.stdout.trim());
}

/** Connects to the forwarded port, sends `text`, and returns everything read until the far end closes. */
async function exchange(port: number, text: string, endAfterWrite = false): Promise<string> {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  socket.write(text);
  if (endAfterWrite) socket.end();
  await once(socket, 'close');
  return received;
}

it('reads the socket specs adbd takes, and nothing that would name the host', () => {
  expect(parseSocketSpec('tcp:6790')).toEqual({ kind: 'tcp', port: 6790 });
  expect(parseSocketSpec('tcp:6790:127.0.0.1')).toEqual({ kind: 'tcp', port: 6790 });
  expect(parseSocketSpec('localabstract:minicap')).toEqual({ kind: 'localabstract', name: 'minicap' });
  for (const bad of ['tcp:0', 'tcp:70000', 'tcp:22:10.0.0.1', 'localabstract:', 'localfilesystem:/tmp/x', 'tcp:x']) {
    expect([bad, parseSocketSpec(bad)]).toEqual([bad, undefined]);
  }
});

it('carries bytes both ways between a host TCP connection and a program listening on an abstract socket', async () => {
  const listening = device.sockets.listen({ kind: 'localabstract', name: 'echo-upper' }, (socket) => {
    socket.setEncoding('utf8');
    socket.on('data', (text: string) => {
      socket.write(text.toUpperCase());
      if (text.includes('\n')) socket.end();
    });
  });
  try {
    const port = await forward('localabstract:echo-upper');
    expect(await exchange(port, 'hello from the host\n')).toBe('HELLO FROM THE HOST\n');
  } finally {
    listening.close();
  }
});

it('streams a large answer from a device-side TCP server without losing or reordering bytes', async () => {
  const payload = Buffer.alloc(3 * 1024 * 1024);
  for (let i = 0; i < payload.length; i += 1) payload[i] = (i * 7 + (i >> 12)) & 0xff;
  const listening = device.sockets.listen({ kind: 'tcp', port: 6790 }, (socket) => {
    socket.once('data', () => socket.end(payload));
  });
  try {
    const port = await forward('tcp:6790');
    const socket = net.connect(port, '127.0.0.1');
    await once(socket, 'connect');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.write('GO');
    await once(socket, 'close');
    expect(Buffer.concat(chunks).equals(payload)).toBe(true);
  } finally {
    listening.close();
  }
}, 60_000);

it('refuses a connection to an address nothing listens on, as a phone does', async () => {
  const port = await forward('localabstract:nobody-home');
  expect(await exchange(port, 'anyone?')).toBe('');
});

it('ends the device-side connection when the host closes its end', async () => {
  const closed = new Promise<void>((resolve) => {
    device.sockets.listen({ kind: 'localabstract', name: 'watch-close' }, (socket) => {
      socket.resume();
      socket.on('close', () => resolve());
    });
  });
  const port = await forward('localabstract:watch-close');
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write('x');
  socket.destroy();
  await closed;
});

it('a reboot takes every listener down with the programs that opened them', async () => {
  device.sockets.listen({ kind: 'localabstract', name: 'before-reboot' }, (socket) => socket.end('up\n'));
  expect(device.sockets.isListening({ kind: 'localabstract', name: 'before-reboot' })).toBe(true);
  device.reboot();
  expect(device.sockets.isListening({ kind: 'localabstract', name: 'before-reboot' })).toBe(false);
  await world.waitForState(device.spec.serial, ['device'], 30_000);
}, 60_000);
