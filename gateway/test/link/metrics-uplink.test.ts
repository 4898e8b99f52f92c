/**
 * MetricsUplink batching, backpressure and drop-oldest as a plain unit: the "link" is a function that keeps
 * the batches it was given (what the hub would receive), and acks are given by the test like a hub would.
 */
import type { MetricsBatch } from '@devicelab/proto';
import { MetricsUplink, toMetricRow } from '../../src/link/metrics-uplink';
import type { SampledRow } from '../../src/samplers/metrics-sink';

const row = (n: number): SampledRow => ({ vendorUniqueIdentifier: 'dev-1', table: 'sample', time: 1_700_000_000_000 + n, fields: { Load: n } });
const loads = (batch: MetricsBatch) => batch.rows.map((r) => (r.values[0] as { number: number }).number);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function hub(accept = true) {
  const received: MetricsBatch[] = [];
  return { received, send: (batch: MetricsBatch) => (accept ? (received.push(batch), true) : false) };
}

describe('MetricsUplink', () => {
  it('writes rows in the wire shape: numbers, texts and flags by field, time in microseconds', () => {
    const wire = toMetricRow({
      vendorUniqueIdentifier: 'dev-1', table: 'health_check', time: 1_700_000_000_123.5,
      fields: { elapsed_seconds: 0.25, is_error: true, failure_reason: 'timeout', bogus: Number.NaN },
    });
    expect(wire).toEqual({
      vendorUniqueIdentifier: 'dev-1', table: 'health_check', timeUs: 1_700_000_000_123_500,
      values: [
        { field: 'elapsed_seconds', value: 'number', number: 0.25 },
        { field: 'is_error', value: 'flag', flag: true },
        { field: 'failure_reason', value: 'text', text: 'timeout' },
      ],
    });
  });

  it('sends a full batch at once and the rest after the flush interval', async () => {
    const h = hub();
    const uplink = new MetricsUplink({ maxBatchRows: 3, flushIntervalMs: 100, maxUnackedBatches: 10 });
    uplink.linkUp(h.send);
    for (let i = 1; i <= 4; i++) uplink.record(row(i));
    expect(h.received.map(loads)).toEqual([[1, 2, 3]]);
    await sleep(250);
    expect(h.received.map(loads)).toEqual([[1, 2, 3], [4]]);
    expect(h.received.map((b) => b.sequence)).toEqual([1, 2]);
    uplink.stop();
  });

  it('keeps at most N batches unacknowledged; each ack lets the next one go', () => {
    const h = hub();
    const uplink = new MetricsUplink({ maxBatchRows: 2, flushIntervalMs: 60_000, maxUnackedBatches: 2 });
    uplink.linkUp(h.send);
    for (let i = 1; i <= 8; i++) uplink.record(row(i));
    expect(h.received.map(loads)).toEqual([[1, 2], [3, 4]]);
    expect(uplink.bufferedRows).toBe(8);
    uplink.acknowledged(1);
    expect(h.received.map(loads)).toEqual([[1, 2], [3, 4], [5, 6]]);
    uplink.acknowledged(1); // a repeated ack changes nothing
    expect(h.received).toHaveLength(3);
    uplink.acknowledged(2);
    uplink.acknowledged(3);
    expect(h.received.map(loads).slice(3)).toEqual([[7, 8]]);
    uplink.acknowledged(4);
    expect(uplink.bufferedRows).toBe(0);
    expect(uplink.acknowledgedRows).toBe(8);
    uplink.stop();
  });

  it('buffers while the hub is away, dropping the OLDEST rows beyond the bound, and reports the count in every batch', () => {
    const uplink = new MetricsUplink({ maxBatchRows: 4, flushIntervalMs: 60_000, maxUnackedBatches: 10, bufferRows: 10 });
    for (let i = 1; i <= 25; i++) uplink.record(row(i));
    expect(uplink.bufferedRows).toBe(10);
    expect(uplink.droppedRows).toBe(15);
    const h = hub();
    uplink.linkUp(h.send);
    expect(h.received.map(loads)).toEqual([[16, 17, 18, 19], [20, 21, 22, 23]]);
    expect(h.received.every((b) => b.droppedRows === 15)).toBe(true);
    uplink.stop();
  });

  it('resends unacknowledged batches after a reconnect unchanged (same epoch, sequence and rows), before newer rows', () => {
    const uplink = new MetricsUplink({ maxBatchRows: 2, flushIntervalMs: 60_000, maxUnackedBatches: 2, bufferRows: 100 });
    const first = hub();
    uplink.linkUp(first.send);
    for (let i = 1; i <= 6; i++) uplink.record(row(i));
    uplink.acknowledged(1); // [1,2] stored; [3,4] and [5,6] sent but never acknowledged (the hub may have stored them)
    expect(first.received.map(loads)).toEqual([[1, 2], [3, 4], [5, 6]]);
    expect(first.received.map((b) => b.sequence)).toEqual([1, 2, 3]);
    uplink.linkDown();
    expect(uplink.unackedBatches).toBe(2);
    uplink.record(row(7));
    uplink.record(row(8));
    expect(uplink.bufferedRows).toBe(6);
    const second = hub();
    uplink.linkUp(second.send);
    // Only the two resends: at most maxUnackedBatches wait for an ack, the same backpressure as before.
    expect(second.received).toEqual([first.received[1], first.received[2]].map((b) => ({ ...b, droppedRows: 0 })));
    expect(second.received.every((b) => b.epoch === uplink.epoch && b.epoch === first.received[0].epoch)).toBe(true);
    uplink.acknowledged(2);
    expect(second.received.map(loads)[2]).toEqual([7, 8]);
    expect(second.received[2].sequence).toBe(4);
    uplink.acknowledged(3);
    uplink.acknowledged(4);
    expect(uplink.bufferedRows).toBe(0);
    expect(uplink.acknowledgedRows).toBe(8);
    uplink.stop();
  });

  it('resends a batch again after every lost link until it is acknowledged, even when acks come out of order', () => {
    const uplink = new MetricsUplink({ maxBatchRows: 1, flushIntervalMs: 60_000, maxUnackedBatches: 3, bufferRows: 100 });
    const links = [hub(), hub(), hub()];
    uplink.linkUp(links[0].send);
    for (let i = 1; i <= 3; i++) uplink.record(row(i));
    uplink.acknowledged(2); // the hub could not store 1 yet (its database was away) but stored 2
    uplink.linkDown();
    uplink.linkUp(links[1].send);
    expect(links[1].received.map((b) => [b.sequence, ...loads(b)])).toEqual([[1, 1], [3, 3]]);
    uplink.linkDown();
    uplink.record(row(4));
    uplink.linkUp(links[2].send);
    expect(links[2].received.map((b) => [b.sequence, ...loads(b)])).toEqual([[1, 1], [3, 3], [4, 4]]);
    uplink.acknowledged(3);
    uplink.acknowledged(1);
    uplink.acknowledged(4);
    expect(uplink.bufferedRows).toBe(0);
    expect(uplink.acknowledgedRows).toBe(4);
    uplink.stop();
  });

  it('a new uplink (a restarted gateway process) names its batches with a new epoch', () => {
    const [a, b] = [new MetricsUplink(), new MetricsUplink()];
    expect(a.epoch).toMatch(/^[0-9a-f-]{36}$/);
    expect(b.epoch).not.toBe(a.epoch);
  });

  it('while the link is down the rows of batches awaiting resend are the oldest: the bound drops them first', () => {
    const uplink = new MetricsUplink({ maxBatchRows: 2, flushIntervalMs: 60_000, maxUnackedBatches: 2, bufferRows: 6 });
    const first = hub();
    uplink.linkUp(first.send);
    for (let i = 1; i <= 4; i++) uplink.record(row(i));
    expect(first.received.map(loads)).toEqual([[1, 2], [3, 4]]);
    uplink.linkDown();
    for (let i = 5; i <= 9; i++) uplink.record(row(i));
    // 9 rows held, bound 6: batch 1 goes whole, row 3 from the front of batch 2.
    expect(uplink.droppedRows).toBe(3);
    expect(uplink.bufferedRows).toBe(6);
    expect(uplink.unackedBatches).toBe(1);
    const second = hub();
    uplink.linkUp(second.send);
    expect(second.received.map((b) => [b.sequence, ...loads(b)])).toEqual([[2, 4], [3, 5, 6]]);
    expect(second.received.every((b) => b.droppedRows === 3)).toBe(true);
    uplink.stop();
  });

  it('keeps a batch awaiting resend when the link refuses to take it, and sends it on the next link', () => {
    const uplink = new MetricsUplink({ maxBatchRows: 1, flushIntervalMs: 60_000, maxUnackedBatches: 2 });
    const first = hub();
    uplink.linkUp(first.send);
    uplink.record(row(1));
    uplink.linkDown();
    uplink.linkUp(hub(false).send);
    uplink.record(row(2));
    uplink.linkDown();
    const third = hub();
    uplink.linkUp(third.send);
    expect(third.received.map((b) => [b.sequence, ...loads(b)])).toEqual([[1, 1], [2, 2]]);
    uplink.stop();
  });

  it('never takes back a batch in flight: over the bound while connected it drops the oldest waiting rows', () => {
    const h = hub();
    const uplink = new MetricsUplink({ maxBatchRows: 2, flushIntervalMs: 60_000, maxUnackedBatches: 1, bufferRows: 4 });
    uplink.linkUp(h.send);
    for (let i = 1; i <= 7; i++) uplink.record(row(i));
    expect(h.received.map(loads)).toEqual([[1, 2]]);
    expect(uplink.droppedRows).toBe(3); // 3, 4, 5 dropped; 1-2 in flight, 6-7 waiting
    uplink.acknowledged(1);
    expect(h.received.map(loads)[1]).toEqual([6, 7]);
    expect(h.received[1].droppedRows).toBe(3);
    uplink.stop();
  });

  it('keeps rows when the link refuses a write', () => {
    const uplink = new MetricsUplink({ maxBatchRows: 1, flushIntervalMs: 60_000, maxUnackedBatches: 5 });
    uplink.linkUp(hub(false).send);
    uplink.record(row(1));
    expect(uplink.bufferedRows).toBe(1);
    expect(uplink.unackedBatches).toBe(0);
    const h = hub();
    uplink.linkDown();
    uplink.linkUp(h.send);
    expect(h.received.map(loads)).toEqual([[1]]);
    uplink.stop();
  });
});
