/**
 * Turns changes of the feed into events for connected clients: each change's object is loaded once (the device as
 * GET /Device shows it, the gateway with its USB hubs as GET /Gateway shows it, the caller's own async job) and
 * handed to every connection whose user may see it. A user without DeviceList sees no device events, without
 * SystemViewGateways no gateway events, only the jobs they started, and a device's history events (the Event as
 * GET /Report/History shows it) only with the report entitlements. A booking made, moved or cancelled is a `reservation`
 * event (the booking as GET /Reservation shows it, absent once cancelled) for whoever may list devices, as bookings are.
 */
import type { DataPortStateName, Entitlement, Logger } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { hasEntitlement } from '../auth/entitlements';
import { readDeviceModel } from '../domain/devices';
import { toWireEvent } from '../domain/reports-history';
import { findReservation } from '../domain/reservations';
import { readDataPortState } from '../domain/hub-settings';
import { listGateways } from '../domain/usb-hubs';
import type { GatewayDirectory } from '../gateways/gateway-directory';
import type { Db } from '../store/database';
import type { Change, ChangeFeed } from './change-feed';

export type EventType = 'device' | 'gateway' | 'job' | 'history' | 'reservation';

export interface LabEvent {
  /** The feed position: what a client sends back as Last-Event-ID. */
  id: string;
  type: EventType;
  /** The changed object's id (device Guid, gateway id, job id). */
  objectId: string;
  /** The object now; absent when it no longer exists (deleted, or a gateway that is not connected). */
  object?: unknown;
  /** For jobs: whose job it is (never sent). */
  ownerId?: string;
}

export type EventSink = (event: LabEvent) => void;

export interface EventSources {
  db: Db;
  gateways: GatewayDirectory;
  dataPortState: DataPortStateName;
  logger: Logger;
}

/** What GET /Report/History asks for. */
const HISTORY_ENTITLEMENTS: Entitlement[] = ['UserList', 'DeviceList', 'ApplicationList'];

export function canSee(user: AuthenticatedUser, event: LabEvent): boolean {
  switch (event.type) {
    case 'device':
    case 'reservation': return hasEntitlement(user, 'DeviceList');
    case 'gateway': return hasEntitlement(user, 'SystemViewGateways');
    case 'job': return event.ownerId === user.id;
    case 'history': return HISTORY_ENTITLEMENTS.every((name) => hasEntitlement(user, name));
  }
}

/** Loads the event of one change; undefined when the change names nothing loadable. */
export async function loadEvent(sources: EventSources, change: Change): Promise<LabEvent | undefined> {
  const { db } = sources;
  switch (change.kind) {
    case 'device': {
      const device = await readDeviceModel(db, change.objectId);
      return { id: change.seq, type: 'device', objectId: change.objectId, object: device };
    }
    case 'gateway':
    case 'usbHub': {
      const row = await db.selectFrom('gateways').select(['id', 'name', 'connected', 'last_seen_at'])
        .where('id', '=', change.objectId).executeTakeFirst().catch(() => undefined);
      if (!row) return { id: change.seq, type: 'gateway', objectId: change.objectId };
      const described = (await listGateways(db, sources.gateways, await readDataPortState(db, sources.dataPortState)))
        .find((g) => g.name === row.name);
      return {
        id: change.seq, type: 'gateway', objectId: row.id,
        object: { ...(described ?? { name: row.name, usbHubList: [] }), connected: row.connected, lastSeen: row.last_seen_at?.toISOString() },
      };
    }
    case 'history': {
      const row = await db.selectFrom('events').selectAll().where('id', '=', change.objectId).executeTakeFirst();
      return row && { id: change.seq, type: 'history', objectId: row.id, object: toWireEvent(row) };
    }
    case 'reservation': {
      // Loaded by its Guid; a feed row naming something else (none is written) is no booking.
      const booking = /^[0-9a-f-]{36}$/i.test(change.objectId) ? await findReservation(db, change.objectId) : undefined;
      return { id: change.seq, type: 'reservation', objectId: change.objectId, object: booking };
    }
    case 'job': {
      const job = await db.selectFrom('async_jobs').select(['id', 'kind', 'status', 'owner_id', 'result', 'completed_at', 'progress'])
        .where('id', '=', change.objectId).executeTakeFirst().catch(() => undefined);
      if (!job) return undefined;
      return {
        id: change.seq, type: 'job', objectId: job.id, ownerId: job.owner_id,
        object: {
          id: job.id, kind: job.kind, status: job.status, progress: job.progress ?? undefined, result: job.result ?? undefined,
          completedAt: job.completed_at?.toISOString(),
        },
      };
    }
  }
}

/** One subscription to the feed for all connections of this process; each change is loaded once. */
export class EventPublisher {
  private readonly sinks = new Set<{ user: AuthenticatedUser; sink: EventSink }>();
  private unsubscribe: (() => void) | undefined;
  /** Loads in feed order, so events leave in the order the changes were made. */
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly feed: ChangeFeed, private readonly sources: EventSources) {}

  get position(): string {
    return this.feed.position;
  }

  connect(user: AuthenticatedUser, sink: EventSink): () => void {
    const entry = { user, sink };
    this.sinks.add(entry);
    this.unsubscribe ??= this.feed.subscribe((change) => this.enqueue(change));
    return () => {
      this.sinks.delete(entry);
      if (this.sinks.size === 0 && this.unsubscribe) {
        this.unsubscribe();
        this.unsubscribe = undefined;
      }
    };
  }

  /** The events after `lastId` that this user may see, oldest first; `gap` when they are no longer all kept. */
  async replay(user: AuthenticatedUser, lastId: bigint): Promise<{ events: LabEvent[]; gap: boolean }> {
    const { changes, gap } = await this.feed.since(lastId);
    const events: LabEvent[] = [];
    for (const change of changes) {
      const event = await loadEvent(this.sources, change);
      if (event && canSee(user, event)) events.push(event);
    }
    return { events, gap };
  }

  private enqueue(change: Change): void {
    this.queue = this.queue.then(async () => {
      if (this.sinks.size === 0) return;
      const event = await loadEvent(this.sources, change);
      if (!event) return;
      for (const { user, sink } of this.sinks) if (canSee(user, event)) sink(event);
    }).catch((err: unknown) => this.sources.logger.warn({ err, change }, 'event could not be loaded'));
  }
}
