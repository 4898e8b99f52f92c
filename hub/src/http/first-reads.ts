/**
 * The reads clients poll (the device lists, the library, /Service), answered before the generic middleware when
 * nothing about the request needs it: a GET of the route's exact path with neither query string nor body, whose
 * authentication is decided without waiting (AuthenticationNow, http/web-session.ts). The route's own handler
 * answers, as it does behind the middleware; what is skipped is only what such a request does not use: the
 * routers' matching, the parameter check and device use (it has no parameters), the body reader (no body), the
 * note of local writes (a GET). Every other request, and any of these whose credentials must be read or checked
 * against the throttle, takes the full way.
 */
import type { RequestHandler } from 'express';
import type { KeptReads } from '../events/kept-reads';
import { sendAuthenticationRequired } from './basic-auth';
import { startTiming } from './metrics-endpoint';
import type { AuthenticationNow } from './web-session';

export class FirstReads {
  private readonly routes = new Map<string, RequestHandler>();

  /** `handler` answers `GET path` here too (the path as its router names it); returns the handler for the router. */
  add(path: string, handler: RequestHandler): RequestHandler {
    this.routes.set(path, handler);
    return handler;
  }

  /** The middleware, first of the application; `mount`: where the routers are mounted (`/apiv1`). */
  middleware(mount: string, authenticateNow: AuthenticationNow, kept: KeptReads): RequestHandler {
    const prefix = `${mount}/`;
    return (req, res, next) => {
      if (req.method !== 'GET' || req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined
        || !req.url.startsWith(prefix)) return next();
      // A query string is part of the key, so any request with parameters misses.
      const route = req.url.slice(mount.length);
      const handler = this.routes.get(route);
      if (handler === undefined) return next();
      const timed = startTiming('GET', res);
      const answer = (decided: ReturnType<AuthenticationNow>) => {
        if (decided === undefined || decided === 'unheard') return next();
        if (decided === 'refused') {
          timed('unmatched'); // as the full way counts a refusal: no route was reached
          sendAuthenticationRequired(res);
          return;
        }
        timed(req.url);
        req.user = decided;
        // Every write committed before this request has been heard (the condition of `decided`): kept reads may be
        // used, and what was heard stands for the device lists' stamps.
        req.keptReads = true;
        req.listStamps = kept.stamp();
        handler(req, res, next);
      };
      const decided = authenticateNow(req, kept.provenNow());
      if (decided !== 'unheard') return answer(decided);
      // No recent ping answered (a busy moment): the request waits for its sync, as the full way would.
      kept.sync().then((heard) => answer(heard ? authenticateNow(req, true) : undefined), next);
    };
  }
}
