/**
 * Relays one WebDriver request verbatim to a device's Appium server through the gateway link: method, path
 * (without the hub's `/Appium` or `/wd/hub` prefix), headers without the hop-by-hop ones and the client's
 * credentials, and the body streamed both ways with backpressure: screenshots and page sources are large and are
 * never held whole.
 */
import http from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';
import { APPIUM_HOST } from '../domain/automation/appium-client';

/** RFC 9110 7.6.1 hop-by-hop fields (and the Host, which names this hop's target): never passed on by a relay. */
export const HOP_BY_HOP_HEADERS = ['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer',
  'transfer-encoding', 'upgrade', 'host', 'proxy-connection'];

/** `headers` without the hop-by-hop fields, those the Connection header names, and those in `dropped` (lower case). */
export function endToEndHeaders(headers: http.IncomingHttpHeaders, dropped: ReadonlySet<string>): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  const named = new Set((headers.connection ?? '').split(',').map((name) => name.trim().toLowerCase()));
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || dropped.has(name) || named.has(name)) continue;
    out[name] = value;
  }
  return out;
}

/** What does not go on to Appium: the hop-by-hop fields, and what must not leave the hub (credentials, cookies). */
const NOT_RELAYED = new Set([...HOP_BY_HOP_HEADERS, 'authorization', 'cookie']);
const relayedHeaders = (headers: http.IncomingHttpHeaders) => endToEndHeaders(headers, NOT_RELAYED);

export interface RelayOutcome {
  /** The status Appium answered, or undefined when it could not be reached (the client got a W3C error then). */
  status?: number;
  error?: Error;
}

/**
 * Sends `req` to `path` through `agent` and streams the answer into `res`. Resolves when both directions are done;
 * a transport failure before the answer started is left to the caller (`error`) to answer in W3C form.
 * The answer is pumped by hand rather than with `stream.pipeline`: a command's answer is one or two chunks, and
 * pipeline's per-call machinery (an AbortController, end-of-stream watchers on both streams) cost more CPU than
 * the relaying itself.
 */
export function relayWebDriver(req: Request, res: Response, agent: http.Agent, path: string, timeoutMs: number): Promise<RelayOutcome> {
  return new Promise((resolve) => {
    const headers = relayedHeaders(req.headers);
    headers.host = APPIUM_HOST;
    const upstream = http.request({ agent, host: APPIUM_HOST, method: req.method, path, headers });
    let settled = false;
    const settle = (outcome: RelayOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const timer = setTimeout(() => upstream.destroy(new Error(`the device's Appium server did not answer within ${timeoutMs / 1000} s`)), timeoutMs);
    upstream.on('response', (answer) => {
      clearTimeout(timer);
      const status = answer.statusCode ?? 502;
      res.writeHead(status, relayedHeaders(answer.headers));
      answer.on('data', (chunk: Buffer) => {
        if (!res.write(chunk)) answer.pause();
      });
      res.on('drain', () => answer.resume());
      answer.on('end', () => res.end(() => settle({ status })));
      // Closed before its end (the tunnel or Appium went away mid-answer): the client must not take it for whole.
      answer.on('close', () => {
        if (answer.complete) return;
        res.destroy();
        settle({ status, error: new Error('the answer of the device\'s Appium server was cut off') });
      });
      answer.on('error', () => undefined); // reported by 'close' above
    });
    upstream.on('error', (error) => {
      if (!res.headersSent) settle({ error });
      else {
        res.destroy();
        settle({ error });
      }
    });
    // The client leaving mid-request ends the relayed request too.
    res.on('close', () => {
      if (res.writableFinished) return;
      upstream.destroy();
      settle({ error: new Error('the client went away') });
    });
    // Most commands are GETs without a body: sent at once rather than after the body stream's end event.
    const length = req.headers['content-length'];
    if (req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) {
      upstream.end();
      req.resume();
    } else {
      pipeline(req, upstream).catch((error: Error) => settle({ error }));
    }
  });
}
