/**
 * The link port: every connection a gateway opens, gRPC (the link, blobs) or a tunnel connection
 * (@devicelab/proto tunnel-connection.ts), told apart by its first bytes once TLS (when configured) is done. gRPC
 * connections go to the gRPC server as they came (its connection injector); a tunnel connection is handed over after
 * its hello, which a gateway must send within HELLO_TIMEOUT_MS and MAX_TUNNEL_HELLO_BYTES.
 */
import net from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { MAX_TUNNEL_HELLO_BYTES, parseTunnelHello, TUNNEL_MAGIC, type TunnelHello } from '@devicelab/proto';
import type { Logger } from '@devicelab/shared';

const HELLO_TIMEOUT_MS = 10_000;

export interface LinkTls {
  cert: Buffer;
  key: Buffer;
  /** Gateways must present a certificate this CA signed (mutual TLS). */
  ca?: Buffer;
}

export interface LinkListenerOptions {
  host: string;
  port: number;
  grpcServer: grpc.Server;
  tls?: LinkTls;
  /** A tunnel connection after its hello: its socket (paused) carries the tunnel's bytes from here on. */
  onTunnel(socket: Duplex, hello: TunnelHello): void;
  logger: Logger;
}

export interface LinkListener {
  port: number;
  /** Stops listening and drops the tunnel connections (the gRPC server shuts its own down). */
  close(): void;
}

export async function listenLink(options: LinkListenerOptions): Promise<LinkListener> {
  // TLS is ours (both kinds of connection use it); the gRPC server then speaks plain HTTP/2 on the decrypted stream.
  const injector = options.grpcServer.createConnectionInjector(grpc.ServerCredentials.createInsecure());
  const tunnels = new Set<Duplex>();
  const route = (socket: net.Socket | tls.TLSSocket) => {
    socket.on('error', () => socket.destroy());
    const timer = setTimeout(() => socket.destroy(), HELLO_TIMEOUT_MS).unref();
    readHead(socket, opening).then((kind) => {
      if (kind === 'grpc') {
        clearTimeout(timer);
        injector.injectConnection(socket);
        return;
      }
      return readHead(socket, helloLine).then((line) => {
        clearTimeout(timer);
        const hello = line === undefined ? undefined : parseTunnelHello(line);
        if (!hello) {
          options.logger.warn({ remoteAddress: socket.remoteAddress }, 'tunnel connection without a valid hello dropped');
          socket.destroy();
          return;
        }
        socket.setNoDelay(true); // a relayed adb packet's header must not wait for the previous packet's ACK
        tunnels.add(socket);
        socket.once('close', () => tunnels.delete(socket));
        options.onTunnel(socket, hello);
      });
    }).catch(() => {
      clearTimeout(timer);
      socket.destroy();
    });
  };
  const server = options.tls
    ? tls.createServer({
      cert: options.tls.cert, key: options.tls.key, ca: options.tls.ca, requestCert: options.tls.ca !== undefined,
      rejectUnauthorized: options.tls.ca !== undefined, ALPNProtocols: ['h2'],
    }, route)
    : net.createServer(route);
  server.on('tlsClientError', () => undefined); // a failed handshake closes that socket; the server goes on
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    close() {
      server.close();
      injector.destroy();
      for (const socket of tunnels) socket.destroy();
    },
  };
}

/** Whether a connection opens with TUNNEL_MAGIC (which is then read), as soon as its first bytes tell. */
const opening = (head: Buffer): Decided<'grpc' | 'tunnel'> | undefined => {
  const compared = Math.min(head.length, TUNNEL_MAGIC.length);
  if (!head.subarray(0, compared).equals(TUNNEL_MAGIC.subarray(0, compared))) return { answer: 'grpc', used: 0 };
  return head.length < TUNNEL_MAGIC.length ? undefined : { answer: 'tunnel', used: TUNNEL_MAGIC.length };
};

/** The hello line (without its newline); undefined past MAX_TUNNEL_HELLO_BYTES. */
const helloLine = (head: Buffer): Decided<string | undefined> | undefined => {
  const newline = head.indexOf(0x0a);
  if (newline >= 0 && newline <= MAX_TUNNEL_HELLO_BYTES) return { answer: head.subarray(0, newline).toString('utf8'), used: newline + 1 };
  return head.length > MAX_TUNNEL_HELLO_BYTES ? { answer: undefined, used: head.length } : undefined;
};

interface Decided<T> { answer: T; used: number }

/**
 * Reads until `decide` answers from what was read so far; the bytes it did not use are put back and the socket is
 * left paused. Rejects when the socket ends first.
 */
function readHead<T>(socket: Duplex, decide: (head: Buffer) => Decided<T> | undefined): Promise<T> {
  return new Promise((resolve, reject) => {
    let head: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
      const decided = decide(head);
      if (!decided) return;
      stop();
      if (head.length > decided.used) socket.unshift(head.subarray(decided.used));
      resolve(decided.answer);
    };
    const onEnd = () => {
      stop();
      reject(new Error('closed before its first bytes were read'));
    };
    const stop = () => {
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.pause();
    };
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.resume();
  });
}
