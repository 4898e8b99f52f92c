/**
 * The dashboard's live state: the device list and gateways, loaded over REST and kept current by the hub's event
 * stream (`GET /apiv1/Events`). The stream is opened first and its events are held until the list has loaded,
 * so no change falls between the two. EventSource reconnects by itself and sends Last-Event-ID; the hub replays
 * what was missed, or sends `reset` when it no longer can, and the lists are loaded again.
 */
import { getJson } from '../api/client';
import type { Device, GatewayDescription } from '../api/types';

type Listener = () => void;

export interface JobEvent { id: string; kind: string; status: string; result?: { isSuccess?: boolean; errorMessage?: string } }

class LiveStore {
  devices = new Map<string, Device>();
  gateways = new Map<string, GatewayDescription>();
  /** Bumped on every change; components re-render when it moves. */
  version = 0;
  connected = false;
  loaded = false;
  /** performance.now() of the last device event applied (for the latency benchmark). */
  lastEventAt = 0;
  private listeners = new Set<Listener>();
  private jobListeners = new Set<(job: JobEvent) => void>();
  private source: EventSource | undefined;
  private held: MessageEvent[] | undefined;

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onJob(listener: (job: JobEvent) => void): () => void {
    this.jobListeners.add(listener);
    return () => this.jobListeners.delete(listener);
  }

  start(withGateways: boolean): void {
    if (this.source) return;
    const source = new EventSource('/apiv1/Events');
    this.source = source;
    this.held = [];
    const handle = (e: MessageEvent) => (this.held ? this.held.push(e) : this.apply(e));
    for (const type of ['device', 'gateway', 'job', 'reset']) source.addEventListener(type, handle as EventListener);
    source.onopen = () => {
      this.connected = true;
      this.changed();
    };
    source.onerror = () => {
      this.connected = false;
      this.changed();
    };
    void this.reload(withGateways);
  }

  stop(): void {
    this.source?.close();
    this.source = undefined;
    this.devices.clear();
    this.gateways.clear();
    this.loaded = false;
    this.changed();
  }

  private async reload(withGateways: boolean): Promise<void> {
    this.held ??= [];
    try {
      const [devices, gateways] = await Promise.all([
        getJson<Device[]>('/Device'),
        withGateways ? getJson<GatewayDescription[]>('/Gateway').catch(() => []) : Promise.resolve([]),
      ]);
      this.devices = new Map(devices.map((d) => [d.id, d]));
      this.gateways = new Map(gateways.map((g) => [g.name, g]));
      this.loaded = true;
    } finally {
      const held = this.held ?? [];
      this.held = undefined;
      for (const e of held) this.apply(e);
      this.changed();
    }
  }

  private apply(e: MessageEvent): void {
    const data = JSON.parse(e.data) as { id: string; object: unknown };
    switch (e.type) {
      case 'device': {
        const device = data.object as Device | null;
        if (device && !device.deleted) this.devices.set(device.id, device);
        else this.devices.delete(data.id);
        this.lastEventAt = performance.now();
        break;
      }
      case 'gateway': {
        const gateway = data.object as GatewayDescription | null;
        if (gateway) this.gateways.set(gateway.name, gateway);
        break;
      }
      case 'job':
        for (const listener of this.jobListeners) listener(data.object as JobEvent);
        return;
      case 'reset':
        void this.reload(this.gateways.size > 0);
        return;
    }
    this.changed();
  }

  private changed(): void {
    this.version += 1;
    for (const listener of this.listeners) listener();
  }
}

export const live = new LiveStore();

// For the dashboard benchmark (scripts/bench/dashboard.mjs): when the last device event was applied.
(globalThis as { __devicelabLastEvent?: () => number }).__devicelabLastEvent = () => live.lastEventAt;
