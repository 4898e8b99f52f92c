/**
 * Gateway reports the records store could not take (PostgreSQL away) are not lost: the gateway is marked out of
 * sync, the store is probed until it answers, and then the gateway's inventory is recorded afresh (a new snapshot
 * from a connected gateway, or all its devices Offline when it is gone). A device unplugged during the outage is
 * then Offline, not Online for ever. One flag per gateway, so an outage of any length holds no backlog.
 */
import { sql } from 'kysely';
import type { Logger } from '@devicelab/shared';
import type { Db } from '../store/database';

const DEFAULT_RECORDS_PROBE_MS = 1_000;

interface InventoryResyncOptions {
  db: Db;
  logger: Logger;
  /** Records the gateway's inventory afresh; a write that fails again marks it out of sync again. */
  resync(gatewayId: string): void;
  probeIntervalMs?: number;
}

export class InventoryResync {
  private readonly outOfSync = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly options: InventoryResyncOptions) {}

  /** A write of this gateway's reports failed because the records store is away; true when it was in sync. */
  markOutOfSync(gatewayId: string): boolean {
    if (this.stopped || this.outOfSync.has(gatewayId)) return false;
    this.outOfSync.add(gatewayId);
    this.timer ??= setTimeout(() => void this.probe(), this.options.probeIntervalMs ?? DEFAULT_RECORDS_PROBE_MS);
    return true;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async probe(): Promise<void> {
    try {
      await sql`SELECT 1`.execute(this.options.db);
    } catch {
      if (!this.stopped) this.timer = setTimeout(() => void this.probe(), this.options.probeIntervalMs ?? DEFAULT_RECORDS_PROBE_MS);
      return;
    }
    this.timer = undefined;
    if (this.stopped) return;
    const gateways = [...this.outOfSync];
    this.outOfSync.clear();
    this.options.logger.info({ gateways: gateways.length }, 'records store back; recording gateway inventories afresh');
    for (const gatewayId of gateways) this.options.resync(gatewayId);
  }
}
