/**
 * A minimal gateway-side stand-in speaking the real link protocol over a real gRPC client: dials the hub with
 * its token, sends Hello with a random nonce, optionally heartbeats, and answers commands through a handler.
 * Tests drive inventory by sending messages themselves.
 */
import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import {
  AUTHORIZATION_METADATA,
  GATEWAY_NAME_METADATA,
  GatewayLinkClient,
  type BlobChunk,
  type Command,
  type CommandResult,
  type DeviceState,
  type GatewayMessage,
  type HubMessage,
  type Welcome,
} from '@devicelab/proto';

export interface FakeGatewayOptions {
  port: number;
  name: string;
  token: string;
  /** Send heartbeats at the interval Welcome asks for (default true). */
  heartbeats?: boolean;
  /** Answers commands; none by default (commands then time out on the hub). */
  onCommand?: (command: Command) => Omit<CommandResult, 'commandId'> | undefined;
}

export class FakeGateway {
  readonly nonce = randomBytes(16);
  readonly received: HubMessage[] = [];
  /** Resolves with the call's final status (error or OK). */
  readonly closed: Promise<grpc.StatusObject>;
  readonly welcome: Promise<Welcome>;
  private readonly client: grpc.Client & Record<string, (...args: unknown[]) => unknown>;
  private readonly call: grpc.ClientDuplexStream<GatewayMessage, HubMessage>;
  private heartbeatTimer?: NodeJS.Timeout;

  constructor(readonly options: FakeGatewayOptions) {
    this.client = new GatewayLinkClient(`127.0.0.1:${options.port}`, grpc.credentials.createInsecure()) as never;
    this.call = this.client.Connect(gatewayMetadata(options.name, options.token)) as grpc.ClientDuplexStream<GatewayMessage, HubMessage>;
    this.closed = new Promise((resolve) => {
      this.call.on('status', resolve);
      this.call.on('error', () => undefined); // the status carries the same information
    });
    this.welcome = new Promise((resolve, reject) => {
      this.call.on('data', (message: HubMessage) => {
        this.received.push(message);
        if (message.body === 'welcome') {
          this.startHeartbeats(message.welcome.heartbeatIntervalMs);
          resolve(message.welcome);
        }
        if (message.body === 'command') this.answer(message.command);
      });
      void this.closed.then((status) => reject(Object.assign(new Error(status.details), { code: status.code })));
    });
    this.welcome.catch(() => undefined);
  }

  /** Connects and says Hello; resolves once Welcome arrived. */
  static async connect(options: FakeGatewayOptions): Promise<FakeGateway> {
    const gateway = new FakeGateway(options);
    gateway.hello();
    await gateway.welcome;
    return gateway;
  }

  hello(): void {
    this.send({
      body: 'hello',
      hello: { gatewayName: this.options.name, gatewayVersion: 'test-1.0', nonce: this.nonce, publicAddress: 'gw.test', publicPort: 7000 },
    });
  }

  send(message: GatewayMessage): void {
    this.call.write(message);
  }

  snapshot(devices: DeviceState[]): void {
    this.send({ body: 'snapshot', snapshot: { devices } });
  }

  stopHeartbeats(): void {
    clearInterval(this.heartbeatTimer);
  }

  /** Drops the stream abruptly (what the hub sees when a gateway dies mid-stream). */
  kill(): void {
    this.stopHeartbeats();
    this.call.cancel();
    this.client.close();
  }

  private startHeartbeats(intervalMs: number): void {
    if (this.options.heartbeats === false) return;
    this.heartbeatTimer = setInterval(() => this.send({ body: 'heartbeat', heartbeat: { sentAtMs: Date.now() } }), intervalMs / 2);
    void this.closed.then(() => this.stopHeartbeats());
  }

  private answer(command: Command): void {
    const result = this.options.onCommand?.(command);
    if (result) this.send({ body: 'commandResult', commandResult: { commandId: command.commandId, ...result } });
  }
}

export function gatewayMetadata(name: string, token: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set(GATEWAY_NAME_METADATA, name);
  metadata.set(AUTHORIZATION_METADATA, `Bearer ${token}`);
  return metadata;
}

/** Calls FetchBlob and collects the chunks; rejects with the gRPC error. */
export function fetchBlob(port: number, name: string, token: string, sha256: string): Promise<BlobChunk[]> {
  const client = new GatewayLinkClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as grpc.Client &
    Record<string, (...args: unknown[]) => grpc.ClientReadableStream<BlobChunk>>;
  const stream = client.FetchBlob({ sha256 }, gatewayMetadata(name, token));
  const chunks: BlobChunk[] = [];
  return new Promise<BlobChunk[]>((resolve, reject) => {
    stream.on('data', (chunk: BlobChunk) => chunks.push(chunk));
    stream.on('error', reject);
    stream.on('end', () => resolve(chunks));
  }).finally(() => client.close());
}

/** A device report with the fields tests care about. */
export function deviceState(vendorUniqueIdentifier: string, overrides: Partial<DeviceState> = {}): DeviceState {
  return {
    vendorUniqueIdentifier,
    operatingSystem: 'Android',
    readiness: 'Ready',
    model: 'Pixel 7',
    manufacturer: 'Google',
    vendorDeviceName: '',
    batteryPercent: 80,
    batteryStatus: 'Charging',
    diskSpace: 128_000_000_000,
    diskSpaceUsed: 1_000,
    properties: [{ name: 'ro.build.id', value: 'TQ3A' }],
    packages: [{ identifier: 'com.example', version: '1.0', buildVersion: '1', system: false }],
    ...overrides,
  };
}

/** Polls `check` until it returns a truthy value or `timeoutMs` passes. */
export async function waitUntil<T>(check: () => Promise<T | undefined | false>, timeoutMs = 5_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
