/**
 * GET /apiv1/Events: the live channel, as server-sent events (README, "Event stream"). Each event has an `id`
 * (send it back as Last-Event-ID to resume), a type (`device`, `gateway`, `job`, `history`, `reservation`) and JSON data
 * `{ "id": objectId, "object": ... }`. A comment every 15 s keeps proxies from closing an idle stream. A stream opened
 * with the dashboard's session ends soon after the session does (a new token, deactivation, lost entitlements):
 * the browser reconnects, and is asked to sign in again.
 */
import { Router, type Request, type Response } from 'express';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import type { EventPublisher, LabEvent } from '../events/event-publisher';
import { sessionCheckOf } from './web-session';

const KEEPALIVE_MS = 15_000;
/** What a browser waits before reconnecting (the SSE `retry` field). */
const RETRY_MS = 1000;
/** A client that reads slower than this much unsent data is dropped; it reconnects and is replayed. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;
/** How often a session's stream checks that the session still stands. */
const SESSION_RECHECK_MS = 5_000;

function frame(event: LabEvent): string {
  const data = JSON.stringify({ id: event.objectId, object: event.object ?? null });
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${data}\n\n`;
}

function lastEventId(req: Request): bigint | undefined {
  const header = req.headers['last-event-id'];
  const text = typeof header === 'string' ? header.trim() : undefined;
  return text && /^\d{1,19}$/.test(text) ? BigInt(text) : undefined;
}

export function eventStreamRouter(publisher: EventPublisher): Router {
  const router = Router();
  router.get('/Events', (req: Request, res: Response, next) => {
    const user = (req as Request & { user?: AuthenticatedUser }).user!;
    res.status(200).set({
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      'X-Accel-Buffering': 'no',
      Connection: 'keep-alive',
    });
    res.flushHeaders();
    req.socket.setNoDelay(true);
    let closed = false;
    const write = (text: string) => {
      if (closed) return;
      res.write(text);
      if (res.writableLength > MAX_BUFFERED_BYTES) res.destroy();
    };
    // Live events that arrive while a replay is read wait for it, so the client sees them after it. A live event
    // the replay already sent is skipped by its id: live events come in commit order, which is not id order, so
    // a live event with a lower id than one already sent is new (see change-feed.ts).
    const pending: LabEvent[] = [];
    let replaying = true;
    const replayed = new Set<string>();
    const send = (event: LabEvent) => {
      if (replayed.has(event.id)) return;
      write(frame(event));
    };
    const disconnect = publisher.connect(user, (event) => (replaying ? pending.push(event) : send(event)));
    const keepalive = setInterval(() => write(': keepalive\n\n'), KEEPALIVE_MS);
    const sessionCheck = sessionCheckOf(req);
    const recheck = sessionCheck && setInterval(() => {
      sessionCheck().then((stands) => { if (!stands) res.end(); }, () => undefined);
    }, SESSION_RECHECK_MS);
    res.on('close', () => {
      closed = true;
      clearInterval(keepalive);
      clearInterval(recheck);
      disconnect();
    });
    write(`retry: ${RETRY_MS}\n: DeviceLab event stream\n\n`);
    const resumeFrom = lastEventId(req);
    const replay = resumeFrom === undefined ? Promise.resolve({ events: [], gap: false }) : publisher.replay(user, resumeFrom);
    replay.then(({ events, gap }) => {
      // Too far behind: the client reloads its lists, then follows from the current position.
      if (gap) write(`id: ${publisher.position}\nevent: reset\ndata: {}\n\n`);
      for (const event of events) {
        send(event);
        replayed.add(event.id);
      }
      replaying = false;
      for (const event of pending.splice(0)) send(event);
    }, (err: unknown) => {
      if (!res.headersSent) next(err);
      else res.destroy();
    });
  });
  return router;
}
