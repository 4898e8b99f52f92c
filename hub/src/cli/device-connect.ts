/**
 * `devicelab connect <device>`: the client end of the hub-relayed device tunnel (issue 11 part 2). Listens on a
 * local TCP port; every accepted connection gets its own WebSocket to `/apiv1/Device/Connect?id=<device>` and
 * carries raw bytes both ways (binary messages), so `adb connect 127.0.0.1:<port>` reaches the device's adb
 * endpoint through the hub, wherever its gateway is. The protocol is in README "Device connections".
 */
import net from 'node:net';
import WebSocket from 'ws';
import { pumpBytes, socketEnd, webSocketEnd } from '../tunnel/byte-pump';

export interface DeviceConnectOptions {
  /** The hub's base URL, e.g. `http://127.0.0.1:8080` (https: for wss:). */
  hubUrl: string;
  /** `Basic ...` of the retainer, or `Bearer <ticket authenticator>`. */
  authorization: string;
  device: string;
  /** Local port; 0 picks a free one. */
  port?: number;
  /** Told about a connection the hub refused (its failure text). */
  onRefused?: (message: string) => void;
}

export interface DeviceConnection {
  port: number;
  close(): Promise<void>;
}

export async function openDeviceConnection(options: DeviceConnectOptions): Promise<DeviceConnection> {
  const url = new URL('/apiv1/Device/Connect', options.hubUrl.replace(/^http/i, 'ws'));
  url.searchParams.set('id', options.device);
  const sockets = new Set<net.Socket>();
  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.setNoDelay(true);
    socket.pause(); // nothing is read before the WebSocket is open
    const ws = new WebSocket(url, { headers: { Authorization: options.authorization }, perMessageDeflate: false });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { if (body.length < 4096) body += chunk; });
      res.on('end', () => {
        options.onRefused?.(failureText(res.statusCode ?? 0, body));
        socket.destroy();
      });
    });
    ws.on('error', () => socket.destroy());
    ws.on('open', () => pumpBytes(socketEnd(socket), webSocketEnd(ws)));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };
}

function failureText(status: number, body: string): string {
  try {
    const parsed = JSON.parse(body) as { errorMessage?: string };
    if (parsed.errorMessage) return `${status}: ${parsed.errorMessage}`;
  } catch {
    // not a Result
  }
  return `HTTP ${status}`;
}
