/**
 * An IMPOSTOR hub: a gRPC server that speaks the link protocol and accepts any gateway, but does not hold the
 * gateway's token hash, so it cannot compute the Welcome proof (HMAC-SHA256 keyed with SHA-256 of the token).
 *
 * Why this exists: every other gateway test runs against the hub's REAL link server (hub/src/gateways/link-server.ts),
 * which always answers Hello with the right proof. The one scenario the real hub cannot produce is a server that
 * is not our hub (wrong address, DNS hijack, a stale or hostile host) talking to the gateway. This peer imitates
 * exactly that far end and nothing else: it records what the gateway sends (call metadata, messages), answers
 * Hello with a proof made from a token it guessed, and tries to give the gateway a command: right behind its
 * Welcome on odd attempts, before any Welcome (skipping the handshake) on even ones.
 * It is not a stand-in for the hub: do not grow it into one; use the real link server for anything else.
 */
import * as grpc from '@grpc/grpc-js';
import { gatewayLinkService, type Command, type GatewayMessage, type HubMessage } from '@devicelab/proto';
import { hubProof } from '../../src/link/hub-proof';

export interface ImpostorSession {
  metadata: grpc.Metadata;
  messages: GatewayMessage[];
  ended: boolean;
}

export class ImpostorHub {
  readonly sessions: ImpostorSession[] = [];
  private server: grpc.Server | undefined;

  /**
   * @param guessedToken the token the impostor computes its proof with (anything but the gateway's real one)
   * @param command what the impostor asks the gateway to do
   */
  constructor(private readonly guessedToken: string, private readonly command?: () => Command) {}

  async start(): Promise<number> {
    const server = new grpc.Server();
    server.addService(gatewayLinkService, {
      Connect: (call: grpc.ServerDuplexStream<GatewayMessage, HubMessage>) => {
        const session: ImpostorSession = { metadata: call.metadata, messages: [], ended: false };
        this.sessions.push(session);
        call.on('data', (message: GatewayMessage) => {
          session.messages.push(message);
          if (message.body !== 'hello') return;
          const commandFirst = this.sessions.length % 2 === 0;
          if (this.command && commandFirst) call.write({ body: 'command', command: this.command() });
          call.write({ body: 'welcome', welcome: { hubProof: hubProof(this.guessedToken, message.hello.nonce), heartbeatIntervalMs: 200 } });
          if (this.command && !commandFirst) call.write({ body: 'command', command: this.command() });
        });
        const end = () => { session.ended = true; };
        call.on('end', () => { end(); call.end(); });
        call.on('error', end);
        call.on('cancelled', end);
      },
      FetchBlob: (call: grpc.ServerWritableStream<unknown, unknown>) => {
        call.emit('error', { code: grpc.status.NOT_FOUND, details: 'an impostor has no blobs' });
      },
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))));
    this.server = server;
    return port;
  }

  stop(): void {
    this.server?.forceShutdown();
    this.server = undefined;
  }
}
