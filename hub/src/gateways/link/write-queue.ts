/**
 * The order in which a gateway's reports reach the records: one queue per gateway, across its successive
 * sessions, so an old session's Offline lands before a new session's Online. Metrics batches have a lane of their
 * own: each waits for the record writes queued before it (its devices' rows exist) but none holds up a device's
 * state behind it. A record write PostgreSQL rolled back to break a conflict (a deadlock) runs again: it records a
 * report as it stands, so running it twice records the same (a metrics batch is not run twice: its samples would be).
 */
import { isTransientConflict } from '../../store/database';

/** Runs of one write when PostgreSQL keeps rolling it back for conflicts. */
const CONFLICT_ATTEMPTS = 3;

/** Device state and other records, or metrics batches (which never delay device state). */
export type WriteLane = 'records' | 'metrics';

export class GatewayWriteQueue {
  /** The last write queued per lane and gateway (`lane/gatewayId`), dropped once it has landed. */
  private readonly tails = new Map<string, Promise<boolean>>();

  /** `failed` hears every write that threw; the queue goes on with the next one. */
  constructor(private readonly failed: (gatewayId: string, err: unknown) => void) {}

  /**
   * Runs `write` after the gateway's writes queued before it in this lane (and, for metrics, in the records lane).
   * Resolves with whether it landed; it never rejects.
   */
  enqueue(gatewayId: string, write: () => Promise<unknown>, lane: WriteLane = 'records'): Promise<boolean> {
    const key = `${lane}/${gatewayId}`;
    const before = lane === 'records' ? this.tails.get(key)
      : Promise.all([this.tails.get(key), this.tails.get(`records/${gatewayId}`)]);
    const next = (before ?? Promise.resolve())
      .then(() => (lane === 'records' ? runThroughConflicts(write) : write()))
      .then(() => true, (err: unknown) => {
        this.failed(gatewayId, err);
        return false;
      });
    this.tails.set(key, next);
    void next.then(() => {
      if (this.tails.get(key) === next) this.tails.delete(key);
    });
    return next;
  }

  /** Resolves once the gateway's record writes queued so far have landed. */
  async recorded(gatewayId: string): Promise<void> {
    await this.enqueue(gatewayId, async () => undefined);
  }

  /** Resolves once every write queued so far, of every gateway and lane, has landed. */
  async drained(): Promise<void> {
    await Promise.all([...this.tails.values()]);
  }
}

async function runThroughConflicts(write: () => Promise<unknown>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await write();
      return;
    } catch (err) {
      if (attempt >= CONFLICT_ATTEMPTS || !isTransientConflict(err)) throw err;
    }
  }
}
