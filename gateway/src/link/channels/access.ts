/**
 * Device access: the hub's retains and releases (Retention, and the current ones in Welcome) decide which tickets
 * and adb keys open each device; every answer says where the device's adb endpoint listens (AccessEndpoint). Who
 * connected goes up as access events, an AccessSync tells when every Retention sent before it is applied here,
 * and OpenTunnel relays a hub connection into a device (checked against the same tickets).
 */
import type { AccessEndpoint, DeviceAccessEvent, MessageHandlers, Retention, Welcome } from '@devicelab/proto';
import type { Logger } from '@devicelab/shared';
import type { AdbAccessEndpoints } from '../../access/adb-access-endpoints';
import { refuseTunnel, relayTunnel, type IosTunnels } from '../../access/hub-tunnel';
import { TicketVerifier } from '../../tickets/ticket-verifier';
import type { ChannelHubMessage, GatewayChannel, HubConnection, LinkSession, TunnelService } from './channel';

export interface AccessOptions {
  /** The retainers' adb endpoints: opened and closed by Retention, the target of hub tunnels. */
  adbAccess?: AdbAccessEndpoints;
  /** iOS devices: hub tunnels reach a usbmux proxy that shows only the retained device. */
  usbmuxAccess?: IosTunnels;
  /** What OpenTunnel reaches besides the access endpoint, by its `service` (one line each in channels/index.ts). */
  tunnelServices?: Record<string, TunnelService | undefined>;
  logger: Logger;
}

/** How often use of one device is reported at most (the hub writes it at most this often too). */
const USE_REPORT_MS = 30_000;

export class AccessChannel implements GatewayChannel {
  /** Checks DeviceAccessTicket authenticators with what the hub sent (Welcome, Retention). */
  readonly tickets = new TicketVerifier();
  /** AccessSyncs sent and not answered yet, by id (each resolves once its answer's Retentions are applied). */
  private readonly syncs = new Map<number, () => void>();
  /** When use of each device was last reported. */
  private readonly usesSent = new Map<string, number>();
  private nextSync = 1;

  constructor(private readonly link: HubConnection, private readonly options: AccessOptions) {}

  open(session: LinkSession, welcome: Welcome): MessageHandlers<ChannelHubMessage> {
    const { adbAccess, usbmuxAccess } = this.options;
    const retentions = welcome.retentions ?? [];
    this.tickets.welcome(welcome.ticketPublicKey, retentions);
    for (const service of Object.values(this.options.tunnelServices ?? {})) service?.retentions?.(retentions, true);
    // Retains that ended while the link was down end their iOS connections too (the adb endpoints: replaceAll).
    usbmuxAccess?.access.keepOnly(retentions);
    if (adbAccess) {
      void adbAccess.replaceAll(retentions).then((answers) => {
        for (const accessEndpoint of answers) session.send({ body: 'accessEndpoint', accessEndpoint });
      });
    }
    return {
      retention: (retention) => {
        this.tickets.apply(retention);
        for (const service of Object.values(this.options.tunnelServices ?? {})) service?.retentions?.([retention], false);
        usbmuxAccess?.access.retained(retention.vendorUniqueIdentifier, retention.retainId || undefined);
        this.apply(session, retention);
      },
      accessSync: ({ id }) => {
        const done = this.syncs.get(Number(id));
        this.syncs.delete(Number(id));
        if (done) void (adbAccess?.applied() ?? Promise.resolve()).then(done);
      },
      openTunnel: (request) => {
        const openCall = () => session.client.Tunnel(this.link.metadata());
        if (request.service) {
          const services = this.options.tunnelServices ?? {};
          const service = Object.hasOwn(services, request.service) ? services[request.service] : undefined;
          if (service) return service.open(request, openCall);
          const call = openCall();
          call.on('error', () => undefined);
          refuseTunnel(call, request.tunnelId, `it serves no '${request.service.slice(0, 40)}' tunnels`);
          return;
        }
        if (!adbAccess && !usbmuxAccess) return;
        relayTunnel(request, {
          openCall, endpoints: adbAccess, tickets: this.tickets,
          ios: usbmuxAccess, report: (accessEvent) => this.event(accessEvent), logger: this.options.logger,
        });
      },
    };
  }

  closed(): void {
    // Their answers will not come: the clients waiting on them are checked against what is known here.
    for (const done of this.syncs.values()) done();
    this.syncs.clear();
  }

  /** A connection to a device's access endpoint was opened or refused (a Note event at the hub). */
  event(accessEvent: DeviceAccessEvent): void {
    this.link.send({ body: 'accessEvent', accessEvent });
  }

  /**
   * Bytes moved through a device's endpoint: the hub hears that its holder uses it (idle release), at most once
   * per device every USE_REPORT_MS, never per packet.
   */
  used(vendorUniqueIdentifier: string): void {
    const now = Date.now();
    const last = this.usesSent.get(vendorUniqueIdentifier);
    if (last !== undefined && now - last < USE_REPORT_MS) return;
    this.usesSent.set(vendorUniqueIdentifier, now);
    this.link.send({ body: 'deviceUse', deviceUse: { vendorUniqueIdentifier } });
  }

  /**
   * Resolves once every Retention the hub had sent when it read this request is applied here: the hub answers an
   * AccessSync behind them on the same stream. At once without a verified session (what is known here decides).
   */
  sync(): Promise<void> {
    const id = this.nextSync++;
    return new Promise((resolve) => {
      this.syncs.set(id, resolve);
      if (!this.link.send({ body: 'accessSync', accessSync: { id } })) {
        this.syncs.delete(id);
        resolve();
      }
    });
  }

  /** A device's adb endpoint closed on its own (the device left while not retained): the hub forgets its port. */
  endpointClosed(accessEndpoint: AccessEndpoint): void {
    this.link.send({ body: 'accessEndpoint', accessEndpoint });
  }

  /** Opens, re-keys or closes the device's adb endpoint and tells the hub where it listens (or that it does not). */
  private apply(session: LinkSession, retention: Retention): void {
    const access = this.options.adbAccess;
    if (!access) {
      // No adb endpoints here: say so at once, or the hub's retain waits its whole endpoint deadline for an answer.
      const { vendorUniqueIdentifier, retainId } = retention;
      session.send({ body: 'accessEndpoint', accessEndpoint: { vendorUniqueIdentifier, retainId, port: 0 } });
      return;
    }
    void access.apply(retention).then(
      (accessEndpoint) => session.send({ body: 'accessEndpoint', accessEndpoint }),
      (err: unknown) => this.options.logger.error({ err, device: retention.vendorUniqueIdentifier }, 'could not apply a retention'),
    );
  }
}
