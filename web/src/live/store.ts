/**
 * The dashboard's live state: the device list and gateways, loaded over REST and kept current by the hub's event
 * stream (`GET /apiv1/Events`). The stream is opened first and its events are held until the list has loaded,
 * so no change falls between the two. EventSource reconnects by itself and sends Last-Event-ID; the hub replays
 * what was missed, or sends `reset` when it no longer can, and the lists are loaded again.
 * A device's history events go to whoever listens (the device page), bookings made, moved or cancelled to the calendars. The stream and the device list are asked for at page load, beside the session check (`begin`), not after it: the
 * grid then waits for one round trip instead of two. Without a session both answer 401 and are asked again after
 * sign-in. Gateways (an entitlement the session tells) come after and do not hold the grid back.
 */
import { getJson, getJsonIfSignedIn } from '../api/client';
import type { Device, GatewayDescription, Reservation } from '../api/types';

type Listener = () => void;

export interface JobEvent { id: string; kind: string; status: string; result?: { isSuccess?: boolean; errorMessage?: string } }

/** A device's history event as GET /Report/History shows it (only with the report entitlements). */
export interface HistoryEvent {
  id: string; deviceId?: string; eventType: string; eventDate: string; message?: string; performedByName?: string;
  applicationName?: string; stringValue?: string; isSuccess?: boolean;
}

/** A booking made or moved (`booking`), cancelled (`booking: null`), or `reload`: some may have been missed. */
export type ReservationChange = { id: string; booking: Reservation | null; reload?: undefined } | { reload: true };

class LiveStore {
  devices = new Map<string, Device>();
  gateways = new Map<string, GatewayDescription>();
  /** Bumped on every change; components re-render when it moves. */
  version = 0;
  /** Bumped when the device list changes, so the grid re-sorts for devices only (not for a gateway or the badge). */
  devicesVersion = 0;
  connected = false;
  loaded = false;
  private loading = false;
  /** performance.now() of the last device event applied (for the latency benchmark). */
  lastEventAt = 0;
  private listeners = new Set<Listener>();
  private jobListeners = new Set<(job: JobEvent) => void>();
  private historyListeners = new Set<(event: HistoryEvent) => void>();
  private reservationListeners = new Set<(change: ReservationChange) => void>();
  private source: EventSource | undefined;
  private held: MessageEvent[] | undefined;
  /** The device list asked for at page load; undefined once used or when it was refused. */
  private early: Promise<Device[] | undefined> | undefined;

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onJob(listener: (job: JobEvent) => void): () => void {
    this.jobListeners.add(listener);
    return () => this.jobListeners.delete(listener);
  }

  /** Hears each event recorded about a device from now on (the device page's history). */
  onHistory(listener: (event: HistoryEvent) => void): () => void {
    this.historyListeners.add(listener);
    return () => this.historyListeners.delete(listener);
  }

  /** Hears each booking made, moved or cancelled from now on, and `reload` when the lists were loaded again. */
  onReservation(listener: (change: ReservationChange) => void): () => void {
    this.reservationListeners.add(listener);
    return () => this.reservationListeners.delete(listener);
  }

  /** At page load, before the session is known: the stream and the device list, if the cookie is good. */
  begin(): void {
    this.open();
    this.early = getJsonIfSignedIn<Device[]>('/Device');
  }

  start(withGateways: boolean): void {
    if (this.loaded || this.loading) return;
    // Opened by begin() unless the hub refused it (no session yet then): the browser does not retry a 401.
    if (!this.source || this.source.readyState === EventSource.CLOSED) this.open();
    void this.reload(withGateways);
  }

  private open(): void {
    this.source?.close();
    const source = new EventSource('/apiv1/Events');
    this.source = source;
    this.held = [];
    const handle = (e: MessageEvent) => (this.held ? this.held.push(e) : this.apply(e));
    for (const type of ['device', 'gateway', 'job', 'history', 'reservation', 'reset']) source.addEventListener(type, handle as EventListener);
    source.onopen = () => {
      this.connected = true;
      this.changed();
    };
    source.onerror = () => {
      if (!this.connected) return;
      this.connected = false;
      this.changed();
    };
  }

  stop(): void {
    this.source?.close();
    this.source = undefined;
    this.early = undefined;
    this.devices.clear();
    this.devicesVersion += 1;
    this.gateways.clear();
    this.loaded = false;
    this.changed();
  }

  private async reload(withGateways: boolean): Promise<void> {
    this.held ??= [];
    const gateways = withGateways ? getJson<GatewayDescription[]>('/Gateway').catch(() => []) : Promise.resolve([]);
    const early = this.early;
    this.early = undefined;
    this.loading = true;
    try {
      const devices = (early && await early) ?? await getJson<Device[]>('/Device');
      this.devices = new Map(devices.map((d) => [d.id, d]));
      this.devicesVersion += 1;
      this.loaded = true;
    } finally {
      this.loading = false;
      const held = this.held ?? [];
      this.held = undefined;
      for (const e of held) this.apply(e);
      this.changed();
    }
    // The gateway column fills in when they arrive; gateway events that came first are newer and stay.
    for (const g of await gateways) if (!this.gateways.has(g.name)) this.gateways.set(g.name, g);
    this.changed();
  }

  private apply(e: MessageEvent): void {
    const data = JSON.parse(e.data) as { id: string; object: unknown };
    switch (e.type) {
      case 'device': {
        const device = data.object as Device | null;
        if (device && !device.deleted) this.devices.set(device.id, device);
        else this.devices.delete(data.id);
        this.devicesVersion += 1;
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
      case 'history':
        if (data.object) for (const listener of this.historyListeners) listener(data.object as HistoryEvent);
        return;
      case 'reservation':
        for (const listener of this.reservationListeners) listener({ id: data.id, booking: data.object as Reservation | null });
        return;
      case 'reset':
        // Bookings missed in the gap are read again by whoever shows them.
        for (const listener of this.reservationListeners) listener({ reload: true });
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
