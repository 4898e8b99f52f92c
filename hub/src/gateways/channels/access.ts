/**
 * Device access: every gateway hears each retain and release (Retention, and the current ones in Welcome) so it
 * admits only the retainer; it answers where the device's access endpoint listens (AccessEndpoint), reports who
 * connected (a Note event), and asks for an AccessSync to know it has every Retention sent before it.
 */
import type { AccessEndpoint, HubMessage, Retention } from '@devicelab/proto';
import { gatewayRetentions } from '../../domain/device-access';
import { recordGatewayDeviceEvent } from '../../domain/gateway-device-events';
import type { GatewaySession } from '../gateway-session';
import type { ChannelContext, HubChannel, SessionChannel } from '../link/channel';

type OrderedAccessMessage = Extract<HubMessage, { body: 'retention' | 'accessSync' }>;

export function accessChannel(ctx: ChannelContext): HubChannel {
  const bySession = new WeakMap<GatewaySession, SessionAccess>();
  return {
    open(session) {
      const access = new SessionAccess(session, ctx);
      bySession.set(session, access);
      return access;
    },
    directory: {
      notifyRetention(retention) {
        // Every gateway hears it, not only the one reporting the device now: a reconnected gateway reports its
        // devices a while after Welcome, and a device can move to another gateway. A retain id is no secret (a
        // ticket also needs the hub's signature), nor are public keys.
        for (const session of ctx.sessions.all()) bySession.get(session)?.sendOrdered({ body: 'retention', retention });
      },
      async accessPort(vendorUniqueIdentifier, retainId, timeoutMs, confirmed) {
        const session = ctx.sessions.holding(vendorUniqueIdentifier);
        return session && bySession.get(session)?.accessPort(vendorUniqueIdentifier, retainId, timeoutMs, confirmed);
      },
    },
  };
}

class SessionAccess implements SessionChannel {
  /** Retention changes (and AccessSync answers behind them) that arrive before Welcome is written; sent right behind it. */
  private held: OrderedAccessMessage[] | undefined = [];
  /**
   * Where each device's access endpoint listens, as the gateway last answered a Retention: for a retain, or for a
   * release that left the endpoint open with nobody allowed in (retain id '', the port kept for the next retain).
   */
  private readonly endpoints = new Map<string, AccessEndpoint>();
  private waiters: { endpoint: Omit<AccessEndpoint, 'port'>; resolve(port: number | undefined): void }[] = [];

  constructor(private readonly session: GatewaySession, private readonly ctx: ChannelContext) {}

  readonly messages: SessionChannel['messages'] = {
    accessEndpoint: (endpoint) => this.onEndpoint(endpoint),
    /** A connection into a device was opened or refused: a Note event on the device. */
    /** Bytes through a device's endpoint: use by its holder (idle release). */
    deviceUse: (use) => this.ctx.onDeviceUse?.(use.vendorUniqueIdentifier),
    accessEvent: (event) => {
      if (event.accepted) this.ctx.onDeviceUse?.(event.vendorUniqueIdentifier);
      void this.session.recordWrite(() => recordGatewayDeviceEvent(this.ctx.db, this.session.gatewayId, {
        vendorUniqueIdentifier: event.vendorUniqueIdentifier, eventType: 'Note', message: event.message,
        detail: event.fingerprint ? `key ${event.fingerprint}` : '', isSuccess: event.accepted, atMs: Number(event.atMs),
      }));
    },
    // Behind every Retention written before it (one ordered stream): the gateway checks the client it holds
    // against every retain and release this hub has answered by now.
    accessSync: (accessSync) => this.sendOrdered({ body: 'accessSync', accessSync }),
  };

  /** The retains of this gateway's devices now; none when the records store cannot say (tickets then wait). */
  async welcome(): Promise<{ ticketPublicKey: Buffer; retentions: Retention[] }> {
    const ticketPublicKey = this.ctx.ticketPublicKey ?? Buffer.alloc(0);
    try {
      return { ticketPublicKey, retentions: await gatewayRetentions(this.ctx.db, this.session.gatewayId) };
    } catch (err) {
      this.ctx.logger.warn({ gateway: this.session.gatewayName, err }, 'could not read retains for Welcome');
      return { ticketPublicKey, retentions: [] };
    }
  }

  welcomed(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const message of held) this.session.write(message);
  }

  ended(): void {
    for (const waiter of [...this.waiters]) waiter.resolve(undefined);
  }

  /** A Retention, or an AccessSync that must follow every Retention before it. */
  sendOrdered(message: OrderedAccessMessage): void {
    if (this.held) this.held.push(message);
    else this.session.write(message);
  }

  /**
   * The port of the device's access endpoint for this retain (undefined: none / no answer in time). Known at once
   * when the gateway has answered an earlier Retention of the device with a port: an endpoint keeps its port from
   * retain to retain while its device stays, and a client that connects is checked only once the gateway has
   * every Retention sent before it (AccessSync), this retain's included (gateway access/adb-access-endpoints.ts).
   * Otherwise, and always when `confirmed`, once the gateway has answered this very retain. A timeout of 0 or less
   * answers only what the hub knows now, without waiting a turn of the event loop for the gateway.
   */
  accessPort(vendorUniqueIdentifier: string, retainId: string, timeoutMs: number, confirmed = false): Promise<number | undefined> {
    const known = this.endpoints.get(vendorUniqueIdentifier);
    if (known?.retainId === retainId) return Promise.resolve(known.port || undefined);
    if (!confirmed && known && known.port > 0) return Promise.resolve(known.port);
    if (this.session.isEnded || timeoutMs <= 0) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const waiter = {
        endpoint: { vendorUniqueIdentifier, retainId },
        resolve: (port: number | undefined) => {
          clearTimeout(timer);
          this.waiters = this.waiters.filter((w) => w !== waiter);
          resolve(port);
        },
      };
      const timer = setTimeout(() => waiter.resolve(undefined), timeoutMs);
      this.waiters.push(waiter);
    });
  }

  private onEndpoint(endpoint: AccessEndpoint): void {
    const vuid = endpoint.vendorUniqueIdentifier;
    if (endpoint.retainId || endpoint.port > 0) this.endpoints.set(vuid, endpoint);
    else this.endpoints.delete(vuid);
    for (const waiter of [...this.waiters]) {
      if (waiter.endpoint.vendorUniqueIdentifier === vuid && waiter.endpoint.retainId === endpoint.retainId) {
        waiter.resolve(endpoint.port || undefined);
      }
    }
  }
}
