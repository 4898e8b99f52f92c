/**
 * Where every sampled metric row goes on the gateway (device samplers, health checks, logs, USB hub telemetry).
 * The link's metrics uplink implements it: rows are batched to the hub, buffered (bounded) while it is away.
 */
import type { MetricTable } from '@devicelab/proto';

export type MetricFieldValue = number | string | boolean;

export interface SampledRow {
  vendorUniqueIdentifier: string;
  table: MetricTable;
  /** Epoch milliseconds (fractions allowed) when the values were read. */
  time: number;
  /** Spec 2.5 field names to values; a field the device cannot provide is left out, never zero. */
  fields: Record<string, MetricFieldValue>;
}

export interface MetricsSink {
  record(row: SampledRow): void;
}
