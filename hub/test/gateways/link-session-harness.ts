/**
 * One gateway session driven message by message: the hub's real link core (GatewaySession, the session table,
 * the write queue) and real channels on a real database, with the Connect stream replaced by an in-process
 * stream of messages. It stands in for gRPC's transport only, so a channel is tested without a lab, a gateway
 * or an adb server; the wire itself is tested with the real gateway (link-server.test.ts, gateway/test/link).
 */
import { EventEmitter } from 'node:events';
import * as grpc from '@grpc/grpc-js';
import type { GatewayMessage, HubMessage, MessagePayload, Welcome } from '@devicelab/proto';
import { createLogger } from '@devicelab/shared';
import { BlobStore } from '../../src/apps/blob-store';
import type { GatewayDirectory } from '../../src/gateways/gateway-directory';
import { GatewaySession, type ConnectCall } from '../../src/gateways/gateway-session';
import { assembleDirectory } from '../../src/gateways/link-server';
import { authenticateCall } from '../../src/gateways/link/authenticate';
import type { ChannelContext, HubChannel } from '../../src/gateways/link/channel';
import { SessionTable } from '../../src/gateways/link/session-table';
import { GatewayWriteQueue } from '../../src/gateways/link/write-queue';
import { PostgresMetricsStore } from '../../src/metrics/postgres-metrics-store';
import type { Db } from '../../src/store/database';

/** The hub end of a Connect stream: what the session writes is kept; what the gateway sends is emitted as data. */
class InProcessCall extends EventEmitter {
  readonly sent: HubMessage[] = [];
  readonly metadata = new grpc.Metadata();
  cancelled = false;
  writableEnded = false;
  destroyed = false;
  /** The status the session ended the stream with. */
  status?: Partial<grpc.StatusObject>;

  constructor() {
    super();
    this.on('error', (status: Partial<grpc.StatusObject>) => { this.status ??= status; });
  }

  write(message: HubMessage): boolean {
    this.sent.push(message);
    this.emit('sent', message);
    return true;
  }

  end(): void {
    this.writableEnded = true;
  }
}

export interface SessionHarness {
  session: GatewaySession;
  sessions: SessionTable<GatewaySession>;
  writes: GatewayWriteQueue;
  directory: GatewayDirectory;
  /** Record writes that failed (none, unless a test means it). */
  failures: unknown[];
  /** Everything the hub wrote to the gateway, in order. */
  sent: HubMessage[];
  /** The status the hub ended the stream with, once it did. */
  status(): Partial<grpc.StatusObject> | undefined;
  /** A message from the gateway. */
  receive(message: GatewayMessage): void;
  /** Hello, then the Welcome the hub answers with. */
  hello(): Promise<Welcome>;
  /** The first message of this kind the hub writes from now on (or has written since `from`). */
  next<B extends HubMessage['body']>(body: B, from?: number): Promise<MessagePayload<HubMessage, B>>;
}

/**
 * A session of the registered gateway `gatewayName` on `db`, with the channels `channels` builds (the real ones
 * of channels/ index.ts, or some of them).
 */
export function startSession(db: Db, gatewayName: string, channels: (ctx: ChannelContext) => HubChannel[]): Promise<SessionHarness> {
  return db.selectFrom('gateways').selectAll().where('name', '=', gatewayName).executeTakeFirstOrThrow().then((gateway) => {
    const logger = createLogger('link-test', 'silent');
    const sessions = new SessionTable<GatewaySession>();
    const failures: unknown[] = [];
    const writes = new GatewayWriteQueue((_gatewayId, err) => failures.push(err));
    const context: ChannelContext = {
      db, blobs: new BlobStore(db), logger, sessions, writes, authenticate: (metadata) => authenticateCall(db, metadata),
      metrics: new PostgresMetricsStore(db, { logger }),
    };
    const built = channels(context);
    const directory = assembleDirectory(sessions, built);
    const call = new InProcessCall();
    const session = new GatewaySession({
      db, gateway, call: call as unknown as ConnectCall, heartbeatIntervalMs: 60_000, logger, writes, sessions, channels: built,
      onEstablished: (established) => sessions.establish(established)?.end('replaced', { replaced: true }),
      onEnded: (ended) => sessions.remove(ended),
    });
    session.start();
    const next = <B extends HubMessage['body']>(body: B, from = call.sent.length) =>
      new Promise<MessagePayload<HubMessage, B>>((resolve) => {
        const payload = (message: HubMessage) => (message as Record<string, unknown>)[body] as MessagePayload<HubMessage, B>;
        const already = call.sent.slice(from).find((message) => message.body === body);
        if (already) return resolve(payload(already));
        const listener = (message: HubMessage) => {
          if (message.body !== body) return;
          call.off('sent', listener);
          resolve(payload(message));
        };
        call.on('sent', listener);
      });
    const receive = (message: GatewayMessage) => call.emit('data', message);
    return {
      session, sessions, writes, directory, sent: call.sent, failures, next, receive,
      status: () => call.status,
      hello: () => {
        const welcome = next('welcome');
        receive({ body: 'hello', hello: { gatewayName, gatewayVersion: 'test', nonce: Buffer.alloc(16), publicAddress: 'gw.test', publicPort: 1 } });
        return welcome;
      },
    };
  });
}
