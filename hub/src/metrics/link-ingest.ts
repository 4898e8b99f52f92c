/**
 * A MetricsBatch from a gateway into the store: vendor unique identifiers become device Guids, rows of
 * unknown devices, of devices whose passive logging is off and of unknown tables are discarded on purpose,
 * and the gateway's dropped-rows counter is kept on its record when it changes. A batch that names itself
 * (epoch and sequence, see received-batches.ts) is stored at most once: a resend of a stored batch whose ack was
 * lost is acknowledged without storing its rows again.
 */
import { metricsIngestRows } from '../observability/hub-metrics';
import type { MetricRow, MetricsBatch, MetricsSettings } from '@devicelab/proto';
import type { Logger } from '@devicelab/shared';
import { isDatabaseUnavailable, type Db } from '../store/database';
import { metricsDisabledDevices } from './passive-logging';
import { claimBatch, MAX_EPOCH_LENGTH } from './received-batches';
import { METRIC_TABLES, type FieldValue, type MetricsRow, type MetricsStore, type MetricTableName } from './metrics-store';

interface BatchOutcome {
  stored: number;
  /** Rows discarded on purpose: unknown device or table, logging off, outside the retention window. */
  discarded: number;
  /** The batch was stored before (a resend after a lost ack): nothing stored now. */
  duplicate: boolean;
}

/** `gatewayId`: the sender; a batch carrying an epoch is stored exactly once per gateway. */
async function ingestMetricsBatch(db: Db, store: MetricsStore, batch: MetricsBatch, gatewayId: string): Promise<BatchOutcome> {
  const epoch = batch.epoch ?? '';
  if (epoch.length > MAX_EPOCH_LENGTH) throw new Error(`metrics batch epoch longer than ${MAX_EPOCH_LENGTH} characters`);
  const rows = batch.rows ?? [];
  const identifiers = [...new Set(rows.map((row) => row.vendorUniqueIdentifier))];
  const devices = identifiers.length === 0 ? [] : await db.selectFrom('devices')
    .select(['id', 'vendor_unique_identifier', 'metrics_enabled'])
    .where('vendor_unique_identifier', 'in', identifiers).execute();
  const deviceIds = new Map(devices.filter((d) => d.metrics_enabled).map((d) => [d.vendor_unique_identifier, d.id]));

  const accepted: MetricsRow[] = [];
  for (const row of rows) {
    const deviceId = deviceIds.get(row.vendorUniqueIdentifier);
    const table = METRIC_TABLES.find((t) => t === row.table);
    if (deviceId && table) accepted.push(toStoreRow(deviceId, table, row));
  }
  // Gateways older than exactly-once delivery send no epoch: their batches are stored as they come.
  const claim = epoch ? claimBatch({ gatewayId, epoch, sequence: Number(batch.sequence) }) : undefined;
  const outcome = await store.ingest(accepted, undefined, claim);
  if (outcome.duplicate) return { stored: 0, discarded: 0, duplicate: true };
  return { stored: outcome.stored, discarded: rows.length - outcome.stored, duplicate: false };
}

function toStoreRow(deviceId: string, table: MetricTableName, row: MetricRow): MetricsRow {
  const values = new Map<string, FieldValue>();
  for (const value of row.values ?? []) {
    if (value.value === 'number') values.set(value.field, value.number);
    else if (value.value === 'text') values.set(value.field, value.text);
    else if (value.value === 'flag') values.set(value.field, value.flag);
  }
  return { deviceId, table, timeUs: Number(row.timeUs), values };
}

/**
 * Remembers the gateway's dropped-rows counter (total since the gateway started) on its record; logs when it
 * grows, since every dropped row is a lost sample.
 */
async function recordDroppedRows(
  db: Db, gateway: { id: string; name: string }, droppedRows: number, previous: number | undefined, logger: Logger,
): Promise<void> {
  if (droppedRows === previous) return;
  await db.updateTable('gateways').set({ metrics_dropped_rows: String(droppedRows) }).where('id', '=', gateway.id).execute();
  if (droppedRows > (previous ?? 0)) {
    logger.warn({ gateway: gateway.name, droppedRows }, 'gateway dropped metrics rows while the hub was unreachable');
  }
}

/** The metrics side of one gateway session: stores batches, answers with acks, knows the settings to send. */
export class MetricsReceiver {
  private lastDropped: number | undefined;

  constructor(
    private readonly db: Db,
    private readonly store: MetricsStore,
    private readonly gateway: { id: string; name: string },
    private readonly logger: Logger,
  ) {}

  /**
   * Stores a batch; resolves with the sequence to acknowledge. When the database is unreachable it rejects
   * (no ack: the gateway keeps the batch and its backpressure holds). Any other failure is logged and the
   * batch acknowledged as discarded, so one bad batch cannot stall the gateway's uplink forever.
   */
  async receive(batch: MetricsBatch): Promise<number> {
    try {
      const outcome = await ingestMetricsBatch(this.db, this.store, batch, this.gateway.id);
      metricsIngestRows.inc({ outcome: 'stored' }, outcome.stored);
      metricsIngestRows.inc({ outcome: 'discarded' }, outcome.discarded);
      if (outcome.duplicate) this.logger.debug({ gateway: this.gateway.name, sequence: batch.sequence }, 'metrics batch stored before; acknowledged again');
      if (outcome.discarded > 0) this.logger.debug({ gateway: this.gateway.name, ...outcome }, 'metrics rows discarded');
      const dropped = Number(batch.droppedRows ?? 0);
      await recordDroppedRows(this.db, this.gateway, dropped, this.lastDropped, this.logger);
      this.lastDropped = dropped;
    } catch (err) {
      if (isDatabaseUnavailable(err)) throw err;
      this.logger.error({ err, gateway: this.gateway.name, sequence: batch.sequence }, 'metrics batch could not be stored; discarded');
    }
    return Number(batch.sequence);
  }

  async settings(): Promise<MetricsSettings> {
    return { disabledVendorUniqueIdentifiers: await metricsDisabledDevices(this.db) };
  }
}
