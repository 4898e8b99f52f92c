/**
 * The gateways linked to the other live replicas, as the records show them: kept in memory (the directory's
 * `connectedGateways` is synchronous) and read again whenever the change feed reports a gateway, device or USB hub
 * change, and every few seconds besides. USB hubs are as their gateway last reported a port-state change
 * (currents and voltages are not recorded on every report).
 */
import { sql } from 'kysely';
import type { UsbHubReport } from '@devicelab/proto';
import type { Logger } from '@devicelab/shared';
import type { ChangeFeed } from '../events/change-feed';
import type { ConnectedGateway } from '../gateways/gateway-directory';
import type { Db } from '../store/database';
import { LockKind, lockHeldSql } from './advisory-locks';
import { thisReplica } from './replica';

const REFRESH_MS = 3_000;
const DEBOUNCE_MS = 100;

export interface RemoteGateway extends ConnectedGateway { hubReplica: string }

export class RemoteGateways {
  private gateways: RemoteGateway[] = [];
  private running: Promise<void> | undefined;
  /** The read that follows every change heard so far (refresh's last answer). */
  private latest: Promise<void> = Promise.resolve();
  private debounce: NodeJS.Timeout | undefined;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly db: Db, private readonly logger: Logger) {}

  async start(feed: Pick<ChangeFeed, 'subscribe'>): Promise<void> {
    await this.refresh();
    this.unsubscribe = feed.subscribe(() => {
      this.debounce ??= setTimeout(() => {
        this.debounce = undefined;
        void this.refresh().catch((err: unknown) => this.logger.warn({ err }, 'could not read the other replicas\' gateways'));
      }, DEBOUNCE_MS);
    });
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), REFRESH_MS);
    this.timer.unref();
  }

  list(): RemoteGateway[] {
    return this.gateways;
  }

  /**
   * Resolves once list() reflects every change notice heard so far: a notice still in its debounce is read now.
   * A request that follows another replica's write (which answers only once every replica heard it, kept reads)
   * then sees it.
   */
  async settled(): Promise<void> {
    if (this.debounce) {
      clearTimeout(this.debounce);
      this.debounce = undefined;
      void this.refresh();
    }
    await this.latest.catch(() => undefined); // a failed read keeps the last list, as the timers' reads do
  }

  /** Reads the records again; a call during a read waits for it and then reads afresh (it may follow a change). */
  refresh(): Promise<void> {
    const next = this.running
      ? this.running.then(() => this.refresh(), () => this.refresh())
      : (this.running = this.read().finally(() => {
        this.running = undefined;
      }));
    this.latest = next;
    return next;
  }

  stop(): void {
    clearInterval(this.timer);
    clearTimeout(this.debounce);
    this.unsubscribe?.();
  }

  private async read(): Promise<void> {
    const rows = await this.db.selectFrom('gateways')
      .select(['id', 'name', 'public_address', 'public_port', 'version', 'last_seen_at', 'hub_replica', 'last_usb_hubs'])
      .where('connected', '=', true).where('hub_replica', '<>', thisReplica.id)
      .where(lockHeldSql(LockKind.gatewayLink, sql`gateways.id::text`))
      .orderBy('name').execute();
    const devices = rows.length === 0 ? [] : await this.db.selectFrom('devices')
      .select(['vendor_unique_identifier', 'gateway_id'])
      .where('gateway_id', 'in', rows.map((row) => row.id)).where('readiness', '<>', 'Offline').execute();
    this.gateways = rows.map((row) => ({
      id: row.id,
      name: row.name,
      publicAddress: row.public_address ?? '',
      publicPort: row.public_port ?? 0,
      version: row.version ?? '',
      connectedAt: row.last_seen_at ?? new Date(0),
      deviceVendorUniqueIdentifiers: devices.filter((d) => d.gateway_id === row.id).map((d) => d.vendor_unique_identifier),
      usbHubs: (row.last_usb_hubs ?? []) as UsbHubReport[],
      hubReplica: row.hub_replica ?? '',
    }));
  }
}
