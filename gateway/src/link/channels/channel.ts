/**
 * What a capability of the link (inventory, commands, access, USB hubs, metrics, blobs) adds to the gateway's
 * core (hub-link.ts): what it sends once a hub is verified, the hub messages it handles in that session, and what
 * it sends at any time on the current session. The core knows none of them by name; they are registered in
 * `channels/index.ts`.
 */
import type * as grpc from '@grpc/grpc-js';
import type {
  BlobChunk, BlobRequest, GatewayMessage, HubMessage, MessageHandlers, OpenTunnel, Retention, TunnelFrame, Welcome,
} from '@devicelab/proto';

export interface LinkClient extends grpc.Client {
  Connect(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<GatewayMessage, HubMessage>;
  FetchBlob(request: BlobRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<BlobChunk>;
  Tunnel(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<TunnelFrame, TunnelFrame>;
}

/** The hub messages after Welcome that a channel may own (heartbeats are the core's). */
export type ChannelHubMessage = Exclude<HubMessage, { body: 'welcome' | 'heartbeat' }>;

/** What every channel may use of the link, whichever session is current. */
export interface HubConnection {
  /** Sends on the current session once its hub is verified; false when there is none. */
  send(message: GatewayMessage): boolean;
  /** The metadata that names and proves this gateway on every call. */
  metadata(): grpc.Metadata;
  /** The client of the hub replica of the current session (or of the one dialled next). */
  client(): LinkClient;
  /** Emits one of the link's events. */
  emit(event: string, ...args: unknown[]): boolean;
}

/** One verified session: what is sent on it goes to the hub replica that sent the message being answered. */
export interface LinkSession {
  /** Sends on this session; false once it is closed. */
  send(message: GatewayMessage): boolean;
  /** The replica this session dialled (tunnels it asks for go back to it). */
  readonly client: LinkClient;
}

export interface GatewayChannel {
  /** A hub was verified (Welcome): what goes up first, and the hub messages this channel handles in the session. */
  open?(session: LinkSession, welcome: Welcome): MessageHandlers<ChannelHubMessage> | void;
  /** A session closed, verified or not (its answers will not come). */
  closed?(): void;
  /** A verified session was lost. */
  down?(): void;
}

/** What a tunnel to a service other than the access endpoint reaches (OpenTunnel's `service`), one per service. */
export interface TunnelService {
  /** Answers the hub's OpenTunnel: `openCall` starts the Tunnel call whose first frame names (or refuses) it. */
  open(request: OpenTunnel, openCall: () => grpc.ClientDuplexStream<TunnelFrame, TunnelFrame>): void;
  /** The hub's current retains (Welcome, `complete`) and each change (Retention). */
  retentions?(retentions: readonly Retention[], complete: boolean): void;
}
