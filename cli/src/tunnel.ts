/**
 * The device access tunnel through the hub: a local TCP port whose every accepted connection becomes one
 * WebSocket to `/apiv1/Device/Connect?id=<device>` (Basic auth of the retainer, or `Bearer <authenticator>` of
 * its retain ticket), carrying the raw byte stream into the device's adb endpoint both ways. Closing either side
 * closes the other; `pipe` gives backpressure both ways (a paused WebSocket stream stops reading the socket).
 */
import type { IncomingMessage } from 'node:http';
import net from 'node:net';
import WebSocket, { createWebSocketStream } from 'ws';
import { earlyAckRelay } from './adb-early-ack';
import { untrustedCertificate, untrustedHub, type ApiClient } from './api-client';
import { CliError, EXIT } from './errors';
import type { Output } from './output';

export interface Tunnel {
  host: string;
  port: number;
  /** `127.0.0.1:<port>`: what `adb connect` and ANDROID_SERIAL take. */
  address: string;
  close(): Promise<void>;
}

/** Where one device's tunnel is and who opens it. */
export interface TunnelTarget {
  /** `ws(s)://<hub>/apiv1/Device/Connect?id=<device>`. */
  url: string;
  /** `Basic <login:token>` of the retainer, or `Bearer <authenticator>` of the retain ticket. */
  authorization: string;
}

export function tunnelUrl(apiBase: string, deviceId: string): string {
  return `${apiBase}/Device/Connect?id=${encodeURIComponent(deviceId)}`.replace(/^http/, 'ws');
}

/** The tunnel as the logged-in user (Basic credentials). */
export function userTunnel(api: ApiClient, deviceId: string): TunnelTarget {
  const auth = Buffer.from(`${api.credentials.user}:${api.credentials.token}`).toString('base64');
  return { url: tunnelUrl(api.credentials.apiBase, deviceId), authorization: `Basic ${auth}` };
}

/** The tunnel opened by a retain ticket's authenticator: no login needed, only the hub's API base. */
export function ticketTunnel(apiBase: string, authenticator: string, deviceId: string): TunnelTarget {
  return { url: tunnelUrl(apiBase, deviceId), authorization: `Bearer ${authenticator}` };
}

/**
 * Client frames are masked with a random key, as RFC 6455 requires of every client; `bufferutil` (a dependency of
 * this package and the hub's, found by ws) does the masking and the hub's unmasking natively: in JavaScript it was
 * most of this process's CPU per pushed byte. (An all-zero key measured no faster once bufferutil was there.)
 */
function openSocket(target: TunnelTarget): WebSocket {
  return new WebSocket(target.url, { headers: { authorization: target.authorization }, perMessageDeflate: false });
}

/** The hub's answer to a refused upgrade: its status and the Result's errorMessage (or the start of the body). */
function readRefusal(res: IncomingMessage, done: (status: number, message: string) => void): void {
  let body = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => { if (body.length < 4096) body += chunk; });
  const finish = () => {
    let message: string;
    try {
      message = (JSON.parse(body) as { errorMessage?: string }).errorMessage ?? '';
    } catch {
      message = body.slice(0, 200);
    }
    done(res.statusCode ?? 0, message);
  };
  res.once('end', finish);
  res.once('error', finish);
}

/** What a device tunnel carries: the device's adb endpoint, or (iOS) a usbmux endpoint listing only the device. */
export type TunnelEndpoint = 'adb' | 'usbmux';

/**
 * Opens one WebSocket and closes it: fails early, with what to do, when the hub will not tunnel to the device;
 * answers what the tunnel carries (the hub's `DeviceLab-Endpoint` header; hubs without it carry adb).
 */
export function probeTunnel(target: TunnelTarget, timeoutMs = 15_000): Promise<TunnelEndpoint> {
  return new Promise((resolve, reject) => {
    const ws = openSocket(target);
    let endpoint: TunnelEndpoint = 'adb';
    ws.once('upgrade', (res) => {
      if (res.headers['devicelab-endpoint'] === 'usbmux') endpoint = 'usbmux';
    });
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new CliError(`The hub did not open the device tunnel within ${timeoutMs / 1000} s. Check that the device's gateway is connected (\`devicelab gateways\`).`, EXIT.timeout));
    }, timeoutMs);
    ws.once('open', () => {
      clearTimeout(timer);
      ws.close();
      resolve(endpoint);
    });
    ws.once('unexpected-response', (_req, res) => {
      clearTimeout(timer);
      readRefusal(res, (status, message) => reject(refusal(status, message, target)));
    });
    ws.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (untrustedCertificate(err.code)) reject(untrustedHub(new URL(target.url).origin.replace(/^ws/, 'http'), err.code!));
      else reject(new CliError(`Cannot open the device tunnel (${err.message}). Check the hub address and that the hub is running.`, EXIT.unreachable));
    });
  });
}

/** The error for the hub's refusal of a tunnel: what went wrong and what to do. */
export function refusal(status: number, message: string, target: TunnelTarget): CliError {
  const byTicket = target.authorization.startsWith('Bearer ');
  if (status === 401) {
    return new CliError(byTicket
      ? `The hub refused the tunnel: the ticket is not valid (HTTP 401${message ? `: ${message}` : ''}). Retain the device again for a new ticket.`
      : `The hub refused the tunnel: wrong login or token (HTTP 401${message ? `: ${message}` : ''}). Run \`devicelab login\` again.`, EXIT.notAuthorised);
  }
  if (status === 404) {
    return new CliError('The hub has no device tunnel (HTTP 404 on /Device/Connect): it is older than this CLI. Update the hub, '
      + 'or use `devicelab run --no-adb`.', EXIT.apiFailure);
  }
  return new CliError(`The hub refused the device tunnel (HTTP ${status}${message ? `: ${message}` : ''}). Retain the device first `
    + '(`devicelab retain <device>`) and check that it is online.', status === 403 ? EXIT.notAuthorised : EXIT.apiFailure);
}

export interface TunnelOptions {
  /** Local port; 0 (default) picks a free one. */
  port?: number;
  host?: string;
  /**
   * Told about each connection the hub refused: `<status>: <errorMessage>`, and the two apart (default: a warning
   * on stderr, once for repeats of one refusal).
   */
  onRefused?: (text: string, status: number, message: string) => void;
  /**
   * The tunnel carries adb: answer the client's writes early (adb-early-ack.ts), `earlyAcks` packets per stream
   * (0 or undefined: none, every OKAY comes from the device).
   */
  earlyAcks?: number;
}

/** A warning per refused connection; adb reconnects at once, again and again: one line per different answer. */
export function refusalWarning(out: Output): (text: string) => void {
  let last = '';
  return (text) => {
    if (text !== last) out.warn(`the hub refused a tunnel connection (HTTP ${text}); is the device still retained by you?`);
    last = text;
  };
}

/** Listens on `host:port` (0: any free port) and relays each connection through its own WebSocket. */
export async function openTunnel(target: TunnelTarget, out: Output, options: TunnelOptions = {}): Promise<Tunnel> {
  const host = options.host ?? '127.0.0.1';
  const onRefused = options.onRefused ?? refusalWarning(out);
  const relays = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    relays.add(socket);
    socket.setNoDelay(true);
    const ws = openSocket(target);
    const stream = createWebSocketStream(ws);
    const finish = (err?: Error) => {
      if (err && !/closed|ECONNRESET|EPIPE/i.test(err.message)) out.warn(`tunnel connection to the device ended: ${err.message}`);
      socket.destroy();
      stream.destroy();
      relays.delete(socket);
    };
    ws.once('unexpected-response', (_req, res) => readRefusal(res, (status, message) => {
      onRefused(message ? `${status}: ${message}` : `${status}`, status, message);
      finish();
    }));
    socket.on('error', finish);
    stream.on('error', finish);
    socket.on('close', () => finish());
    stream.on('close', () => finish());
    if (options.earlyAcks) {
      const relay = earlyAckRelay(options.earlyAcks);
      relay.toDevice.on('error', finish);
      relay.toClient.on('error', finish);
      socket.pipe(relay.toDevice).pipe(stream).pipe(relay.toClient).pipe(socket);
    } else {
      socket.pipe(stream).pipe(socket);
    }
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
