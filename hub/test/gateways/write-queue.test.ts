/**
 * The per-gateway write queue on its own (no link, no database): each write is a promise the test settles, so
 * what waits for what is observed directly.
 */
import { GatewayWriteQueue } from '../../src/gateways/link/write-queue';

/** A write the test finishes (or fails) when it chooses; `started` tells whether the queue has run it yet. */
function controlledWrite() {
  let finish!: () => void;
  let fail!: (err: Error) => void;
  const write = {
    started: false,
    finish: () => finish(),
    fail: (err: Error) => fail(err),
    run: () => {
      write.started = true;
      return new Promise<void>((resolve, reject) => { finish = resolve; fail = reject; });
    },
  };
  return write;
}

/** Lets every promise callback that is ready run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('gateway write queue', () => {
  it("runs one gateway's record writes one after another, in order; another gateway's do not wait for them", async () => {
    const queue = new GatewayWriteQueue(() => undefined);
    const first = controlledWrite();
    const second = controlledWrite();
    const elsewhere = controlledWrite();
    const done: string[] = [];
    void queue.enqueue('gw-1', first.run).then(() => done.push('first'));
    void queue.enqueue('gw-1', second.run).then(() => done.push('second'));
    void queue.enqueue('gw-2', elsewhere.run).then(() => done.push('elsewhere'));
    await settle();
    expect([first.started, second.started, elsewhere.started]).toEqual([true, false, true]);

    elsewhere.finish();
    await settle();
    expect(done).toEqual(['elsewhere']);
    first.finish();
    await settle();
    expect(second.started).toBe(true);
    second.finish();
    await settle();
    expect(done).toEqual(['elsewhere', 'first', 'second']);
  });

  it('starts a metrics batch only after the record writes queued before it, and never holds a record write behind a batch', async () => {
    const queue = new GatewayWriteQueue(() => undefined);
    const deviceRow = controlledWrite();
    const batch = controlledWrite();
    const laterState = controlledWrite();
    void queue.enqueue('gw-1', deviceRow.run);
    void queue.enqueue('gw-1', batch.run, 'metrics');
    await settle();
    expect(batch.started).toBe(false); // its device's row is not written yet

    deviceRow.finish();
    await settle();
    expect(batch.started).toBe(true);
    void queue.enqueue('gw-1', laterState.run);
    await settle();
    expect(laterState.started).toBe(true); // the batch is still being stored
    laterState.finish();
    batch.finish();
    await queue.drained();
  });

  it('reports a failed write with its gateway (the write says it did not land) and goes on with the next one', async () => {
    const failures: [string, unknown][] = [];
    const queue = new GatewayWriteQueue((gatewayId, err) => failures.push([gatewayId, err]));
    const failing = controlledWrite();
    const next = controlledWrite();
    const failed = queue.enqueue('gw-1', failing.run);
    void queue.enqueue('gw-1', next.run);
    await settle();
    failing.fail(new Error('connection refused'));
    await expect(failed).resolves.toBe(false);
    expect(failures).toEqual([['gw-1', new Error('connection refused')]]);
    await settle();
    expect(next.started).toBe(true);
    next.finish();
    await queue.drained();
  });

  it("recorded() waits for the gateway's record writes queued so far, drained() for every lane of every gateway", async () => {
    const queue = new GatewayWriteQueue(() => undefined);
    const write = controlledWrite();
    const batch = controlledWrite();
    void queue.enqueue('gw-1', write.run);
    let recorded = false;
    void queue.recorded('gw-1').then(() => { recorded = true; });
    await settle();
    expect(recorded).toBe(false);
    write.finish();
    await settle();
    expect(recorded).toBe(true);

    void queue.enqueue('gw-2', batch.run, 'metrics');
    let drained = false;
    void queue.drained().then(() => { drained = true; });
    await settle();
    expect(drained).toBe(false);
    batch.finish();
    await settle();
    expect(drained).toBe(true);
  });
});
