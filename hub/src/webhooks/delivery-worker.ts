/**
 * Works the webhook delivery queue: POSTs each queued Event as JSON, signed with
 * `X-DeviceLab-Signature: sha256=<hex HMAC-SHA256 of the body, keyed by the webhook's secret>`. At least once and
 * in order per device: a delivery is taken only when no earlier one of the same webhook and device is pending,
 * and stays pending (retried with exponential backoff) until the endpoint answers 2xx or the attempts run out.
 * Taking uses FOR UPDATE SKIP LOCKED and a lease instead of a held transaction, so several hub processes can share
 * the queue and a slow endpoint holds no database connection. It runs apart from every request: a failing
 * endpoint costs the API nothing.
 */
import { createHmac } from 'node:crypto';
import { sql } from 'kysely';
import type { Logger } from '@devicelab/shared';
import { toWireEvent } from '../domain/reports-history';
import { webhookDeliveries } from '../observability/hub-metrics';
import type { Db } from '../store/database';

export interface WebhookDeliveryOptions {
  /** First retry delay; doubles per attempt up to `retryMaxMs`. Default 1 s. */
  retryInitialMs: number;
  retryMaxMs: number;
  /** Attempts before a delivery is given up (status `failed`) so later events of its device can go. Default 20. */
  maxAttempts: number;
  /** How often the queue is looked at. Default 500 ms. */
  pollMs: number;
  /** Deadline of one POST. Default 10 s. */
  requestTimeoutMs: number;
  /** Deliveries taken per look (each of a different webhook and device). Default 20. */
  batch: number;
}

export const DEFAULT_WEBHOOK_DELIVERY: WebhookDeliveryOptions = {
  retryInitialMs: 1000, retryMaxMs: 5 * 60_000, maxAttempts: 20, pollMs: 500, requestTimeoutMs: 10_000, batch: 20,
};

export const SIGNATURE_HEADER = 'X-DeviceLab-Signature';

export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

interface Claimed { id: string; webhook_id: string; event_id: string; attempts: number }

/** Starts the worker; the returned function stops it (after the deliveries in flight). */
export function startWebhookDelivery(db: Db, logger: Logger, overrides: Partial<WebhookDeliveryOptions> = {}): () => Promise<void> {
  const options = { ...DEFAULT_WEBHOOK_DELIVERY, ...overrides };
  const leaseMs = options.requestTimeoutMs + 30_000;
  let stopped = false;
  const stopping = new AbortController(); // a stop does not wait for a hanging endpoint: the delivery stays pending
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();

  const claim = async (): Promise<Claimed[]> => {
    const { rows } = await sql<Claimed>`
      UPDATE webhook_deliveries SET claimed_until = now() + ${`${leaseMs} milliseconds`}::interval
      WHERE id IN (
        SELECT d.id FROM webhook_deliveries d
        WHERE d.status = 'pending' AND d.next_attempt_at <= now()
          AND (d.claimed_until IS NULL OR d.claimed_until < now())
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e WHERE e.webhook_id = d.webhook_id
            AND e.order_key = d.order_key AND e.status = 'pending' AND e.id < d.id)
        ORDER BY d.id LIMIT ${options.batch}
        FOR UPDATE OF d SKIP LOCKED)
      RETURNING id, webhook_id, event_id, attempts`.execute(db);
    return rows;
  };

  const deliver = async (delivery: Claimed): Promise<void> => {
    const [hook, event] = await Promise.all([
      db.selectFrom('webhooks').select(['url', 'secret']).where('id', '=', delivery.webhook_id).executeTakeFirst(),
      db.selectFrom('events').selectAll().where('id', '=', delivery.event_id).executeTakeFirst(),
    ]);
    if (!hook || !event) return; // deleted meanwhile: the cascade removes the delivery too
    const body = JSON.stringify(toWireEvent(event));
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      const res = await fetch(hook.url, {
        method: 'POST', body, redirect: 'manual', signal: AbortSignal.any([AbortSignal.timeout(options.requestTimeoutMs), stopping.signal]),
        headers: {
          'content-type': 'application/json', [SIGNATURE_HEADER]: signature(hook.secret, body),
          'X-DeviceLab-Event': event.event_type, 'X-DeviceLab-Delivery': String(delivery.id),
        },
      });
      statusCode = res.status;
      await res.body?.cancel();
      if (res.status < 200 || res.status > 299) error = `HTTP ${res.status}`;
    } catch (err) {
      error = err instanceof Error ? `${err.name}: ${(err.cause as Error | undefined)?.message ?? err.message}` : String(err);
    }
    const attempts = delivery.attempts + 1;
    if (!error) {
      await db.updateTable('webhook_deliveries').set({
        status: 'delivered', attempts, last_status_code: statusCode, last_error: null, delivered_at: new Date(), claimed_until: null,
      }).where('id', '=', delivery.id).execute();
      webhookDeliveries.inc({ outcome: 'delivered' });
      return;
    }
    const giveUp = attempts >= options.maxAttempts;
    const delayMs = Math.min(options.retryMaxMs, options.retryInitialMs * 2 ** (attempts - 1));
    await db.updateTable('webhook_deliveries').set({
      status: giveUp ? 'failed' : 'pending', attempts, last_status_code: statusCode, last_error: error.slice(0, 500),
      next_attempt_at: new Date(Date.now() + delayMs), claimed_until: null,
    }).where('id', '=', delivery.id).execute();
    webhookDeliveries.inc({ outcome: giveUp ? 'failed' : 'retry' });
    // The webhook id, never its URL (it may carry a token) nor its secret.
    logger.debug({ webhook: delivery.webhook_id, delivery: delivery.id, attempts, error }, 'webhook delivery failed');
  };

  const tick = async (): Promise<void> => {
    try {
      for (;;) {
        const claimed = await claim();
        await Promise.all(claimed.map((delivery) => deliver(delivery).catch((err: unknown) => {
          logger.warn({ err, delivery: delivery.id }, 'webhook delivery could not be recorded');
        })));
        if (claimed.length < options.batch || stopped) break;
      }
    } catch (err) {
      logger.warn({ err }, 'webhook queue unavailable');
    }
  };

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = tick().then(schedule);
    }, options.pollMs);
  };
  schedule();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    stopping.abort();
    await running;
  };
}
