/** A minimal hub-side link server for gateway tests (until/besides the hub's real link server). */
import * as grpc from '@grpc/grpc-js';
import { gatewayLinkService, type BlobChunk, type BlobRequest, type GatewayMessage, type HubMessage } from '@devicelab/proto';
import { hubProof } from '../../src/link/hub-proof';

export interface FakeHubSession {
  metadata: grpc.Metadata;
  messages: GatewayMessage[];
  call: grpc.ServerDuplexStream<GatewayMessage, HubMessage>;
  ended: boolean;
}

export class FakeHub {
  readonly sessions: FakeHubSession[] = [];
  readonly blobs = new Map<string, Buffer>();
  blobRequests = 0;
  /** Token used to compute the Welcome proof (a wrong one simulates an impostor hub). */
  proofToken: string;
  heartbeatIntervalMs = 200;
  private server: grpc.Server | undefined;
  private waiters: (() => void)[] = [];

  constructor(token: string) {
    this.proofToken = token;
  }

  async start(port = 0): Promise<number> {
    const server = new grpc.Server();
    server.addService(gatewayLinkService, {
      Connect: (call: grpc.ServerDuplexStream<GatewayMessage, HubMessage>) => {
        const session: FakeHubSession = { metadata: call.metadata, messages: [], call, ended: false };
        this.sessions.push(session);
        call.on('data', (message: GatewayMessage) => {
          session.messages.push(message);
          if (message.body === 'hello') {
            call.write({
              body: 'welcome',
              welcome: { hubProof: hubProof(this.proofToken, message.hello.nonce), heartbeatIntervalMs: this.heartbeatIntervalMs },
            });
          }
          this.notify();
        });
        const end = () => {
          session.ended = true;
          this.notify();
        };
        call.on('end', () => { end(); call.end(); });
        call.on('error', end);
        call.on('cancelled', end);
      },
      FetchBlob: (call: grpc.ServerWritableStream<BlobRequest, BlobChunk>) => {
        this.blobRequests++;
        const data = this.blobs.get(call.request.sha256);
        if (!data) {
          call.emit('error', { code: grpc.status.NOT_FOUND, details: 'no such blob' });
          return;
        }
        for (let i = 0; i < data.length; i += 16 * 1024) {
          call.write({ data: data.subarray(i, i + 16 * 1024), totalSize: i === 0 ? data.length : 0 });
        }
        call.end();
      },
    });
    const bound = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
    this.server = server;
    return bound;
  }

  /** Hard stop: every open stream breaks (like a hub crash). */
  stop(): void {
    this.server?.forceShutdown();
    this.server = undefined;
  }

  last(): FakeHubSession {
    return this.sessions[this.sessions.length - 1];
  }

  async waitFor<T>(probe: () => T | undefined | false, timeoutMs = 5_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = probe();
      if (value) return value;
      if (Date.now() > deadline) throw new Error('timed out waiting in FakeHub');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 50);
        this.waiters.push(() => { clearTimeout(t); resolve(); });
      });
    }
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
