/**
 * The gateway's MetricsSink: rows are collected into MetricsBatch messages (at most `maxBatchRows` rows, or
 * whatever is waiting `flushIntervalMs` after its first row) and sent over the link. At most
 * `maxUnackedBatches` batches wait for the hub's MetricsAck at any time (backpressure: a slow hub makes rows
 * wait here, not in gRPC buffers). While the hub is away rows wait in a buffer of at most `bufferRows` rows,
 * counting the rows of unacknowledged batches; when it is full the OLDEST rows are dropped and counted, and
 * that total travels in every batch (`dropped_rows`). Exactly-once: every batch is named by (`epoch`, `sequence`),
 * the epoch a random id of this process; on a lost link unacknowledged batches are kept as they are and sent again
 * with the same name and rows after the reconnect, before any newer row, so the hub can recognise a batch it
 * stored whose ack was lost. While the link is down their rows are the oldest held and are dropped first.
 */
import { randomUUID } from 'node:crypto';
import type { MetricRow, MetricsBatch, MetricValue } from '@devicelab/proto';
import type { MetricsSink, SampledRow } from '../samplers/metrics-sink';

export interface MetricsUplinkOptions {
  maxBatchRows: number;
  flushIntervalMs: number;
  maxUnackedBatches: number;
  bufferRows: number;
}

export const DEFAULT_UPLINK: MetricsUplinkOptions = {
  maxBatchRows: 500,
  flushIntervalMs: 1_000,
  maxUnackedBatches: 4,
  bufferRows: 100_000,
};

/** Writes one batch to the hub; false when the link could not take it. */
type SendBatch = (batch: MetricsBatch) => boolean;

/** The wire form of a sampled row (non-finite numbers are not values: left out). */
export function toMetricRow(row: SampledRow): MetricRow {
  const values: MetricValue[] = [];
  for (const [field, value] of Object.entries(row.fields)) {
    if (typeof value === 'number') {
      if (Number.isFinite(value)) values.push({ field, value: 'number', number: value });
    } else if (typeof value === 'boolean') values.push({ field, value: 'flag', flag: value });
    else if (typeof value === 'string') values.push({ field, value: 'text', text: value });
  }
  return { vendorUniqueIdentifier: row.vendorUniqueIdentifier, table: row.table, timeUs: Math.round(row.time * 1000), values };
}

export class MetricsUplink implements MetricsSink {
  readonly options: MetricsUplinkOptions;
  /** Names this process's batches: sequences count within it (see the header). */
  readonly epoch = randomUUID();
  /** Rows not yet in a batch, oldest first, from index `head`. */
  private queue: MetricRow[] = [];
  private head = 0;
  /** Batches sent and not acknowledged, by sequence (insertion order = sequence order). */
  private readonly unacked = new Map<number, MetricRow[]>();
  /** How many of the oldest `unacked` batches went out on the current link (the rest wait to be resent). */
  private sentOnLink = 0;
  private unackedRows = 0;
  private nextSequence = 1;
  private send: SendBatch | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  /** Rows dropped because the buffer was full, since start. */
  droppedRows = 0;
  /** Rows the hub acknowledged, since start. */
  acknowledgedRows = 0;

  constructor(options: Partial<MetricsUplinkOptions> = {}) {
    this.options = { ...DEFAULT_UPLINK, ...options };
    if (this.options.bufferRows < this.options.maxBatchRows) this.options.bufferRows = this.options.maxBatchRows;
  }

  /** Rows held (waiting plus unacknowledged). */
  get bufferedRows(): number {
    return this.queue.length - this.head + this.unackedRows;
  }

  get unackedBatches(): number {
    return this.unacked.size;
  }

  record(row: SampledRow): void {
    this.queue.push(toMetricRow(row));
    this.enforceBound();
    if (this.waiting >= this.options.maxBatchRows) this.pump();
    else this.armFlush();
  }

  /** The link is up (a verified session): batches go out through `send` from now on. */
  linkUp(send: SendBatch): void {
    this.send = send;
    this.pump();
    this.armFlush();
  }

  /** The link is gone: unacknowledged batches stay as they are, to be sent again (same epoch and sequence). */
  linkDown(): void {
    this.send = undefined;
    this.sentOnLink = 0;
    this.enforceBound();
    this.clearFlush();
  }

  /** MetricsAck: the hub has every row of this batch. */
  acknowledged(sequence: number): void {
    const rows = this.unacked.get(sequence);
    if (!rows) return;
    // Batches sent on this link are the first `sentOnLink` entries; the hub may ack them out of order.
    if ([...this.unacked.keys()].indexOf(sequence) < this.sentOnLink) this.sentOnLink--;
    this.unacked.delete(sequence);
    this.unackedRows -= rows.length;
    this.acknowledgedRows += rows.length;
    this.pump();
    this.armFlush();
  }

  stop(): void {
    this.clearFlush();
    this.send = undefined;
  }

  private get waiting(): number {
    return this.queue.length - this.head;
  }

  /**
   * Sends batches while the link is up: first the unacknowledged batches of earlier links, unchanged, then new
   * ones while fewer than `maxUnackedBatches` wait; full batches only unless `flush`.
   */
  private pump(flush = false): void {
    while (this.send && this.sentOnLink < this.unacked.size) {
      const [sequence, rows] = [...this.unacked][this.sentOnLink];
      if (!this.send({ epoch: this.epoch, sequence, rows, droppedRows: this.droppedRows })) return;
      this.sentOnLink++;
    }
    while (this.send && this.unacked.size < this.options.maxUnackedBatches && this.waiting > 0) {
      if (!flush && this.waiting < this.options.maxBatchRows) return;
      const rows = this.queue.slice(this.head, this.head + this.options.maxBatchRows);
      const sequence = this.nextSequence;
      if (!this.send({ epoch: this.epoch, sequence, rows, droppedRows: this.droppedRows })) return;
      this.nextSequence++;
      this.head += rows.length;
      this.unacked.set(sequence, rows);
      this.sentOnLink++;
      this.unackedRows += rows.length;
      this.compact();
    }
  }

  /**
   * Drops the oldest rows beyond the bound that can still be taken back: batches waiting to be resent (oldest
   * first, from the front of each; the hub may have stored one whose ack was lost, its rows are counted dropped
   * all the same), then waiting rows. Batches sent on the current link are in flight and stay.
   */
  private enforceBound(): void {
    let excess = this.bufferedRows - this.options.bufferRows;
    if (excess <= 0) return;
    for (const [sequence, rows] of [...this.unacked].slice(this.sentOnLink)) {
      if (excess <= 0) return;
      const drop = Math.min(excess, rows.length);
      if (drop === rows.length) this.unacked.delete(sequence);
      else this.unacked.set(sequence, rows.slice(drop));
      this.unackedRows -= drop;
      this.droppedRows += drop;
      excess -= drop;
    }
    const drop = Math.min(excess, this.waiting);
    this.head += drop;
    this.droppedRows += drop;
    this.compact();
  }

  private compact(): void {
    if (this.head > 4096 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  private armFlush(): void {
    if (this.flushTimer || !this.send || this.waiting === 0) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      this.pump(true);
      this.armFlush();
    }, this.options.flushIntervalMs);
    this.flushTimer.unref?.();
  }

  private clearFlush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
  }
}
