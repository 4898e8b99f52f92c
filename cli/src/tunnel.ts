/**
 * The device access tunnel through the hub: a local TCP port whose every accepted connection becomes one
 * WebSocket to `/apiv1/Device/Connect?id=<device>` (Basic auth of the retainer), carrying the raw byte stream
 * into the device's adb endpoint both ways. Closing either side closes the other.
 */
import net from 'node:net';
import WebSocket, { createWebSocketStream } from 'ws';
import type { ApiClient } from './api-client';
import { CliError, EXIT } from './errors';
import type { Output } from './output';

export interface Tunnel {
  host: string;
  port: number;
  /** `127.0.0.1:<port>`: what `adb connect` and ANDROID_SERIAL take. */
  address: string;
  close(): Promise<void>;
}

export function tunnelUrl(api: ApiClient, deviceId: string): string {
  return api.url('/Device/Connect', { id: deviceId }).replace(/^http/, 'ws');
}

function openSocket(api: ApiClient, deviceId: string): WebSocket {
  const auth = Buffer.from(`${api.credentials.user}:${api.credentials.token}`).toString('base64');
  return new WebSocket(tunnelUrl(api, deviceId), { headers: { authorization: `Basic ${auth}` }, perMessageDeflate: false });
}

/** Opens one WebSocket and closes it: fails early, with what to do, when the hub will not tunnel to the device. */
export function probeTunnel(api: ApiClient, deviceId: string, timeoutMs = 15_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = openSocket(api, deviceId);
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new CliError(`The hub did not open the device tunnel within ${timeoutMs / 1000} s. Check that the device's gateway is connected (\`devicelab gateways\`).`, EXIT.timeout));
    }, timeoutMs);
    ws.once('open', () => {
      clearTimeout(timer);
      ws.close();
      resolve();
    });
    ws.once('unexpected-response', (_req, res) => {
      clearTimeout(timer);
      let body = '';
      res.on('data', (chunk: Buffer) => { body += chunk.toString(); });
      res.on('end', () => reject(refusal(res.statusCode ?? 0, body)));
      res.on('error', () => reject(refusal(res.statusCode ?? 0, body)));
    });
    ws.once('error', (err) => {
      clearTimeout(timer);
      reject(new CliError(`Cannot open the device tunnel (${err.message}). Check the hub address and that the hub is running.`, EXIT.unreachable));
    });
  });
}

function refusal(status: number, body: string): CliError {
  let message = '';
  try {
    message = (JSON.parse(body) as { errorMessage?: string }).errorMessage ?? '';
  } catch {
    message = body.slice(0, 200);
  }
  if (status === 401) return new CliError('The hub refused the tunnel: wrong login or token (HTTP 401). Run `devicelab login` again.', EXIT.notAuthorised);
  if (status === 404) {
    return new CliError('The hub has no device tunnel (HTTP 404 on /Device/Connect): it is older than this CLI. Update the hub, '
      + 'or use `devicelab run --no-adb`.', EXIT.apiFailure);
  }
  return new CliError(`The hub refused the device tunnel (HTTP ${status}${message ? `: ${message}` : ''}). Retain the device first `
    + '(`devicelab retain <device>`) and check that it is online.', status === 403 ? EXIT.notAuthorised : EXIT.apiFailure);
}

/** Listens on `host:port` (0: any free port) and relays each connection through its own WebSocket. */
export async function openTunnel(api: ApiClient, deviceId: string, out: Output, options: { port?: number; host?: string } = {}): Promise<Tunnel> {
  const host = options.host ?? '127.0.0.1';
  const relays = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    relays.add(socket);
    socket.setNoDelay(true);
    const ws = openSocket(api, deviceId);
    const stream = createWebSocketStream(ws);
    const finish = (err?: Error) => {
      if (err && !/closed|ECONNRESET|EPIPE/i.test(err.message)) out.warn(`tunnel connection to the device ended: ${err.message}`);
      socket.destroy();
      stream.destroy();
      relays.delete(socket);
    };
    ws.once('unexpected-response', (_req, res) => {
      out.warn(`the hub refused a tunnel connection (HTTP ${res.statusCode}); is the device still retained by you?`);
      res.resume();
      finish();
    });
    socket.on('error', finish);
    stream.on('error', finish);
    socket.on('close', () => finish());
    stream.on('close', () => finish());
    socket.pipe(stream).pipe(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(new CliError(
      `Cannot listen on ${host}:${options.port ?? 0} (${err.code ?? err.message}). Choose another --port.`, EXIT.usage)));
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  return {
    host, port, address: `${host}:${port}`,
    close: () => new Promise<void>((resolve) => {
      for (const socket of relays) socket.destroy();
      server.close(() => resolve());
    }),
  };
}
