/**
 * The hub's own calls to a device's Appium server (create and delete a session), through the gateway link: the
 * agent that `automationAgent` gives opens each connection as a stream to that device's server on its gateway.
 * Everything else a client sends is relayed as it came (http/webdriver-relay.ts).
 */
import http from 'node:http';
import type { GatewayDirectory } from '../../gateways/gateway-directory';

/** What the hub needs of the gateways for automation: an agent per device to its Appium server, and its log. */
export type AutomationGateways = Pick<GatewayDirectory, 'automationAgent' | 'automationLog'>;

/** The name the relayed requests carry in `Host`: the agent decides where they go. */
export const APPIUM_HOST = 'appium.devicelab';

export interface AppiumAnswer {
  status: number;
  /** The JSON answer, or undefined when the body was not JSON. */
  body: unknown;
  text: string;
}

/** Longest answer the hub reads itself (session create/delete answers are small). */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/** One request with a JSON body to the device's Appium server; rejects on a transport failure or `timeoutMs`. */
export function callAppium(
  agent: http.Agent, method: string, path: string, body: unknown, options: { timeoutMs: number; requestId?: string; signal?: AbortSignal },
): Promise<AppiumAnswer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: http.OutgoingHttpHeaders = { host: APPIUM_HOST, accept: 'application/json' };
    if (payload) {
      headers['content-type'] = 'application/json; charset=utf-8';
      headers['content-length'] = payload.length;
    }
    if (options.requestId) headers['x-request-id'] = options.requestId;
    const request = http.request({ agent, host: APPIUM_HOST, method, path, headers, signal: options.signal }, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_ANSWER_BYTES) {
          request.destroy(new Error(`Appium's answer to ${method} ${path} is larger than ${MAX_ANSWER_BYTES} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      response.on('end', () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        resolve({ status: response.statusCode ?? 502, body: parsed, text });
      });
      response.on('error', reject);
    });
    const timer = setTimeout(() => request.destroy(new Error(`Appium did not answer ${method} ${path} within ${options.timeoutMs} ms`)), options.timeoutMs);
    request.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    request.end(payload);
  });
}

/** The `value` of a W3C answer, if it is an object. */
export function valueOf(answer: AppiumAnswer): Record<string, unknown> | undefined {
  const body = answer.body as { value?: unknown } | undefined;
  const value = body?.value;
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value as Record<string, unknown> : undefined;
}
