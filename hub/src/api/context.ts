/** What every router needs: the store, blobs, gateways and settings given to createApiApp. */
import type { DataPortStateName, Logger } from '@devicelab/shared';
import type { BlobStore } from '../apps/blob-store';
import type { PackageInspector } from '../apps/package-inspector';
import type { Clock } from '../domain/async-jobs';
import type { TicketKeys } from '../domain/device-ticket';
import type { DeviceUseNotes } from '../domain/device-use';
import type { LineServer } from '../domain/line-server';
import type { GatewayDirectory } from '../gateways/gateway-directory';
import type { MetricsStore } from '../metrics/metrics-store';
import type { Db } from '../store/database';
import type { KeptReads } from '../events/kept-reads';
import type { Request } from 'express';
import { readNow, type KeepRead } from '../domain/kept-read';

export interface ApiDependencies {
  db: Db;
  blobs: BlobStore;
  gateways: GatewayDirectory;
  metrics: MetricsStore;
  logger: Logger;
  ticketKeys: TicketKeys;
  uploadLimitBytes: number;
  uploadTempDir: string;
  /** Reads uploaded packages in workers with limits. */
  packages: PackageInspector;
  /** Deadline of every async job (`/Async`, `wait=true`). */
  asyncJobTimeoutMs?: number;
  clock: Clock;
  serviceNodeId: string;
  serviceVersion?: string;
  /** The hub configuration's dataPortState, used until /Settings stores one. */
  dataPortState: DataPortStateName;
  /** This replica's part of the lab's waiting line for devices. */
  waitingLine: LineServer;
  /** Use of devices by their holders, coalesced (idle release). */
  deviceUse: DeviceUseNotes;
  /** Reads kept between writes: `kept.kept(key, load)` for a read that changes only when a table is written. */
  kept: KeptReads;
}

/**
 * The domain's way to a kept read (domain/kept-read.ts), through this API's kept reads, for a request that has
 * heard every write committed before it came (http/basic-auth.ts); any other reads the records.
 */
export const keepRead = (deps: ApiDependencies, req: Request): KeepRead =>
  (req.keptReads ? (key, load, tables) => deps.kept.kept(key, load, { tables }) : readNow);
