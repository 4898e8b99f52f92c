import type { DeviceState } from '@devicelab/proto';
import type { DeviceListener } from '../../src/drivers/device-driver';

export type Recorded = { type: 'changed'; state: DeviceState } | { type: 'removed'; id: string };

/** A DeviceListener that keeps every event and lets tests wait for one. */
export class Recorder implements DeviceListener {
  readonly events: Recorded[] = [];

  deviceChanged(state: DeviceState): void { this.events.push({ type: 'changed', state }); }
  deviceRemoved(id: string): void { this.events.push({ type: 'removed', id }); }

  readinessOf(id: string): string[] {
    return this.events.flatMap((e) => {
      if (e.type === 'removed') return e.id === id ? ['Removed'] : [];
      return e.state.vendorUniqueIdentifier === id ? [e.state.readiness] : [];
    });
  }

  latest(id: string): DeviceState | undefined {
    for (let i = this.events.length - 1; i >= 0; i--) {
      const e = this.events[i];
      if (e.type === 'changed' && e.state.vendorUniqueIdentifier === id) return e.state;
      if (e.type === 'removed' && e.id === id) return undefined;
    }
    return undefined;
  }

  /** Waits until an event after index `from` satisfies `match`. */
  async waitFor(match: (e: Recorded) => boolean, timeoutMs = 15_000, from = 0): Promise<Recorded> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.slice(from).find(match);
      if (found) return found;
      if (Date.now() > deadline) {
        throw new Error(`timed out; events: ${JSON.stringify(this.events.map((e) => (e.type === 'removed' ? `removed ${e.id}` : `${e.state.vendorUniqueIdentifier} ${e.state.readiness}`)))}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  waitReadiness(id: string, readiness: string, timeoutMs?: number, from = 0): Promise<Recorded> {
    return this.waitFor((e) => e.type === 'changed' && e.state.vendorUniqueIdentifier === id && e.state.readiness === readiness, timeoutMs, from);
  }

  waitRemoved(id: string, timeoutMs?: number, from = 0): Promise<Recorded> {
    return this.waitFor((e) => e.type === 'removed' && e.id === id, timeoutMs, from);
  }
}
