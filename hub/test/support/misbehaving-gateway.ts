/**
 * A misbehaving link peer. It exists ONLY to inject protocol faults our real gateway never makes (a message
 * before Hello, a Hello naming another gateway, falling silent without closing the stream, FetchBlob with a
 * bad token or a malformed address), so the hub's defences against them can be tested. It is not a stand-in
 * for the gateway: every normal-path test drives the hub with the real gateway (gateway/src) in front of
 * simulated devices (see hub/test/gateways/real-gateway-lab.ts). Do not grow it into one.
 */
import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import {
  AUTHORIZATION_METADATA,
  GATEWAY_NAME_METADATA,
  GatewayLinkClient,
  type BlobChunk,
  type DeviceState,
  type GatewayMessage,
  type HubMessage,
  type Welcome,
} from '@devicelab/proto';

export interface MisbehavingGatewayOptions {
  port: number;
  /** The name and token in the call metadata. */
  name: string;
  token: string;
}

/** One raw Connect stream; sends only what the test tells it to (no heartbeats, no answers). */
export class MisbehavingGateway {
  readonly received: HubMessage[] = [];
  /** Resolves with the call's final status. */
  readonly closed: Promise<grpc.StatusObject>;
  /** Resolves with the first Welcome; rejects if the call ends first. */
  readonly welcome: Promise<Welcome>;
  private readonly client: grpc.Client & Record<string, (...args: unknown[]) => unknown>;
  private readonly call: grpc.ClientDuplexStream<GatewayMessage, HubMessage>;

  constructor(readonly options: MisbehavingGatewayOptions) {
    this.client = new GatewayLinkClient(`127.0.0.1:${options.port}`, grpc.credentials.createInsecure()) as never;
    this.call = this.client.Connect(linkMetadata(options.name, options.token)) as grpc.ClientDuplexStream<GatewayMessage, HubMessage>;
    this.closed = new Promise((resolve) => {
      this.call.on('status', resolve);
      this.call.on('error', () => undefined); // the status carries the same information
    });
    this.welcome = new Promise((resolve, reject) => {
      this.call.on('data', (message: HubMessage) => {
        this.received.push(message);
        if (message.body === 'welcome') resolve(message.welcome);
      });
      void this.closed.then((status) => reject(Object.assign(new Error(status.details), { code: status.code })));
    });
    this.welcome.catch(() => undefined);
  }

  /** Hello naming `gatewayName` (default: the name in the metadata). */
  hello(gatewayName = this.options.name): void {
    this.send({
      body: 'hello',
      hello: { gatewayName, gatewayVersion: 'misbehaving', nonce: randomBytes(16), publicAddress: 'misbehaving.test', publicPort: 1 },
    });
  }

  send(message: GatewayMessage): void {
    this.call.write(message);
  }

  snapshot(devices: DeviceState[]): void {
    this.send({ body: 'snapshot', snapshot: { devices } });
  }

  close(): void {
    this.call.cancel();
    this.client.close();
  }
}

function linkMetadata(name: string, token: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set(GATEWAY_NAME_METADATA, name);
  metadata.set(AUTHORIZATION_METADATA, `Bearer ${token}`);
  return metadata;
}

/** Calls FetchBlob with the given credentials and address; resolves with the chunks or rejects with the gRPC error. */
export async function fetchBlobAs(port: number, name: string, token: string, sha256: string): Promise<BlobChunk[]> {
  const chunks: BlobChunk[] = [];
  for await (const chunk of streamBlobAs(port, name, token, sha256)) chunks.push(chunk);
  return chunks;
}

/** FetchBlob's chunks as they arrive, read only as fast as the caller takes them (flow control does the rest). */
export async function* streamBlobAs(port: number, name: string, token: string, sha256: string): AsyncGenerator<BlobChunk> {
  const client = new GatewayLinkClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as grpc.Client &
    Record<string, (...args: unknown[]) => grpc.ClientReadableStream<BlobChunk>>;
  const stream = client.FetchBlob({ sha256 }, linkMetadata(name, token));
  try {
    for await (const chunk of stream as AsyncIterable<BlobChunk>) yield chunk;
  } finally {
    stream.cancel();
    client.close();
  }
}
