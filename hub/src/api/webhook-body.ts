/** The JSON body of `POST /Webhook?add` (`{"url":..,"eventTypes":[..],"secret":..}`), read into a WebhookInput. */
import { ApiFailure } from '@devicelab/shared';
import type { BodyReader } from '../http/json-body';
import { echo } from '../http/echo';
import type { WebhookInput } from '../webhooks/webhooks';

const KEYS = ['url', 'eventtypes', 'secret'];

/** Read when the domain asks (after the entitlement is checked). */
export function webhookInput(readBody: BodyReader): () => WebhookInput {
  return () => {
    const body = readBody();
    const unknown = body.keys().find((key) => !KEYS.includes(key));
    if (unknown !== undefined) throw new ApiFailure(`Property '${echo(unknown)}' is not part of a webhook: send url, eventTypes and secret.`);
    const url = body.string('url');
    const secret = body.string('secret');
    if (!url) throw new ApiFailure("Property 'url' is required.");
    if (!secret) throw new ApiFailure("Property 'secret' is required (it signs every delivery).");
    return { url, secret, eventTypes: body.has('eventTypes') ? body.stringArray('eventTypes') ?? [] : [] };
  };
}
