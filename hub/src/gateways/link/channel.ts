/**
 * What a capability of the link (inventory, commands, access, USB hubs, metrics, blobs) adds to the hub's core:
 * the gateway messages it handles in each session, what it puts into Welcome and sends behind it, the gRPC calls
 * it serves, and the GatewayDirectory operations it answers. The core (link-server.ts, gateway-session.ts) knows
 * none of them by name; they are registered in `channels/index.ts`.
 */
import type * as grpc from '@grpc/grpc-js';
import type { GatewayMessage, MessageHandlers, Welcome } from '@devicelab/proto';
import type { Logger } from '@devicelab/shared';
import type { BlobStore } from '../../apps/blob-store';
import type { MetricsStore } from '../../metrics/metrics-store';
import type { Db } from '../../store/database';
import type { GatewayRow } from '../../store/schema';
import type { GatewayDirectory } from '../gateway-directory';
import type { GatewaySession } from '../gateway-session';
import type { SessionTable } from './session-table';
import type { GatewayWriteQueue } from './write-queue';

/** The messages a gateway sends after Hello that a channel may own (Hello and heartbeats are the core's). */
export type ChannelMessage = Exclude<GatewayMessage, { body: 'hello' | 'heartbeat' }>;

/** How a session ended, as its channels hear it. */
export interface SessionEnd {
  reason: string;
  /** The hub is stopping: work waiting on the gateway gets no answer (the next start reconciles). */
  hubStopping: boolean;
}

/** A channel's part of one gateway session. */
export interface SessionChannel {
  messages?: MessageHandlers<ChannelMessage>;
  /** What this channel puts into Welcome, read after the session is established and before Welcome is written. */
  welcome?(): Promise<Partial<Welcome>>;
  /** Welcome is written: what follows it on the stream. */
  welcomed?(): void;
  ended?(end: SessionEnd): void;
}

/** The gRPC methods of GatewayLink other than Connect (each channel serves the ones it owns). */
export type LinkMethods = Record<string, grpc.UntypedHandleCall>;

export interface HubChannel {
  /** Its part of a session that just started (before Hello). */
  open?(session: GatewaySession): SessionChannel;
  methods?: LinkMethods;
  directory?: Partial<GatewayDirectory>;
}

/** What every channel may use: the records, the sessions of this replica and their write queue. */
export interface ChannelContext {
  db: Db;
  blobs: BlobStore;
  logger: Logger;
  sessions: SessionTable<GatewaySession>;
  writes: GatewayWriteQueue;
  /** The gateway a call's metadata names and proves; undefined when it proves nothing. */
  authenticate(metadata: grpc.Metadata): Promise<GatewayRow | undefined>;
  /** SPKI DER of the DeviceAccessTicket signing key, sent in Welcome. */
  ticketPublicKey?: Buffer;
  metrics: MetricsStore;
  /** Told of a connection opened into a device (its access endpoint): use that keeps its retain from going idle. */
  onDeviceUse?: (vendorUniqueIdentifier: string) => void;
}
