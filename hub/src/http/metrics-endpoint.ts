/**
 * Prometheus over HTTP: the request timer every REST request passes, and `/metrics`, served only to a scraper
 * that presents the configured bearer token (no token configured: `/metrics` does not exist).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import type { Registry } from 'prom-client';
import type { Logger } from '@devicelab/shared';
import { httpRequestDuration } from '../observability/hub-metrics';

/**
 * Times each request under its route template (`/apiv1/Device/Metrics`), never its raw URL, so the label's
 * values are bounded by the routes the hub has; requests no route took are `unmatched`.
 */
export function requestTiming(): RequestHandler {
  return (req, res, next) => {
    const end = httpRequestDuration.startTimer();
    res.once('finish', () => {
      const template = (req as { route?: { path?: unknown } }).route?.path;
      const prefix = req.originalUrl.startsWith('/apiv1/') ? '/apiv1' : '';
      const route = typeof template === 'string' ? prefix + template : req.path === '/metrics' ? '/metrics' : 'unmatched';
      end({ method: req.method, route, status: String(res.statusCode) });
    });
    next();
  };
}

/**
 * Times a request answered before any router ran (http/first-reads.ts), from now, as requestTiming would; the
 * returned function names its route once it is known.
 */
export function startTiming(method: string, res: Response): (route: string) => void {
  const end = httpRequestDuration.startTimer();
  return (route) => {
    res.once('finish', () => end({ method, route, status: String(res.statusCode) }));
  };
}

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/** `GET /metrics` with `Authorization: Bearer <token>`; anything else is 401 (token wrong) or 404 (disabled). */
export function metricsEndpoint(registry: Registry, token: string | undefined, logger: Logger): RequestHandler {
  const expected = token ? digest(token) : undefined;
  return (req, res, next) => {
    if (req.path !== '/metrics' || req.method !== 'GET' || !expected) return next();
    const match = /^Bearer (.+)$/i.exec(req.get('authorization') ?? '');
    if (!match || !timingSafeEqual(digest(match[1]), expected)) {
      res.status(401).set('WWW-Authenticate', 'Bearer realm="metrics"').type('text/plain').send('metrics: bearer token required\n');
      return;
    }
    registry.metrics().then((text) => {
      res.type(registry.contentType).send(text);
    }, (err: unknown) => {
      logger.error({ err }, 'metrics scrape failed');
      res.status(503).type('text/plain').send('metrics unavailable\n');
    });
  };
}
