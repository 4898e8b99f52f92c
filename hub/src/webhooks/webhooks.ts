/**
 * The `/Webhook` resource (extension, administrators only: SystemManageSettings): endpoints that receive every
 * Event as it is recorded. The secret is stored as given, because it must be readable to sign each delivery;
 * it is never returned by the API nor logged (responses say only `hasSecret`).
 */
import { ApiFailure, EventType, formatWireDate } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { requireEntitlement } from '../auth/entitlements';
import type { Db } from '../store/database';

export interface WebhookInput {
  url: string;
  /** Event types to receive (spec EventType names); empty: every event. */
  eventTypes: string[];
  secret: string;
}

export interface WireWebhook {
  id: string;
  url: string;
  eventTypes: string[];
  hasSecret: boolean;
  createdAt: string;
}

export interface WireWebhookDelivery {
  id: number;
  eventId: string;
  eventType: string;
  deviceId?: string;
  status: string;
  attempts: number;
  lastStatusCode?: number;
  lastError?: string;
  createdAt: string;
  nextAttemptAt?: string;
  deliveredAt?: string;
}

const MAX_URL_LENGTH = 2048;
const MAX_SECRET_LENGTH = 1024;
const MIN_SECRET_LENGTH = 16;
const DELIVERY_LOG_ROWS = 200;

export async function listWebhooks(db: Db, user: AuthenticatedUser): Promise<WireWebhook[]> {
  requireEntitlement(user, 'SystemManageSettings');
  const rows = await db.selectFrom('webhooks').select(['id', 'url', 'event_types', 'created_at']).orderBy('created_at').execute();
  return rows.map((row) => ({
    id: row.id, url: row.url, eventTypes: row.event_types, hasSecret: true, createdAt: formatWireDate(row.created_at),
  }));
}

export async function addWebhook(db: Db, user: AuthenticatedUser, read: () => WebhookInput): Promise<WireWebhook> {
  requireEntitlement(user, 'SystemManageSettings');
  const input = read();
  checkUrl(input.url);
  if (input.secret.length < MIN_SECRET_LENGTH || input.secret.length > MAX_SECRET_LENGTH) {
    throw new ApiFailure(`The webhook secret must be ${MIN_SECRET_LENGTH} to ${MAX_SECRET_LENGTH} characters.`);
  }
  const known = new Set<string>(EventType as readonly string[]);
  const unknown = input.eventTypes.filter((type) => !known.has(type));
  if (unknown.length > 0) throw new ApiFailure(`Unknown event type(s): ${unknown.join(', ')}. Known: ${[...known].join(', ')}.`);
  const row = await db.insertInto('webhooks')
    .values({ url: input.url, event_types: [...new Set(input.eventTypes)], secret: input.secret, created_by: user.id })
    .returning(['id', 'url', 'event_types', 'created_at']).executeTakeFirstOrThrow();
  return { id: row.id, url: row.url, eventTypes: row.event_types, hasSecret: true, createdAt: formatWireDate(row.created_at) };
}

export async function deleteWebhook(db: Db, user: AuthenticatedUser, id: string): Promise<void> {
  requireEntitlement(user, 'SystemManageSettings');
  const deleted = await db.deleteFrom('webhooks').where('id', '=', id).executeTakeFirst();
  if (Number(deleted.numDeletedRows) === 0) throw new ApiFailure(`No webhook with id ${id}.`);
}

/** The newest deliveries of one webhook (at most DELIVERY_LOG_ROWS), newest first. */
export async function webhookDeliveries(db: Db, user: AuthenticatedUser, id: string): Promise<WireWebhookDelivery[]> {
  requireEntitlement(user, 'SystemManageSettings');
  const hook = await db.selectFrom('webhooks').select('id').where('id', '=', id).executeTakeFirst();
  if (!hook) throw new ApiFailure(`No webhook with id ${id}.`);
  const rows = await db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', id)
    .orderBy('id', 'desc').limit(DELIVERY_LOG_ROWS).execute();
  return rows.map((row) => ({
    id: Number(row.id),
    eventId: row.event_id,
    eventType: row.event_type,
    deviceId: row.order_key || undefined,
    status: row.status,
    attempts: row.attempts,
    lastStatusCode: row.last_status_code ?? undefined,
    lastError: row.last_error ?? undefined,
    createdAt: formatWireDate(row.created_at),
    nextAttemptAt: row.status === 'pending' ? formatWireDate(row.next_attempt_at) : undefined,
    deliveredAt: row.delivered_at ? formatWireDate(row.delivered_at) : undefined,
  }));
}

function checkUrl(text: string): void {
  let url: URL | undefined;
  try {
    url = text.length <= MAX_URL_LENGTH ? new URL(text) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) {
    throw new ApiFailure(`The webhook url must be an http or https URL without credentials, at most ${MAX_URL_LENGTH} characters.`);
  }
}
