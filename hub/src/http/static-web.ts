/**
 * Serves the dashboard (the `web` package's build, `web/dist`) at `/`: hashed files under `/assets/` are cached
 * for a year, `index.html` is revalidated every time, and a GET for one of the dashboard's own pages (`/`,
 * `/devices/<id>`, `/apps`, `/calendar`, `/lab`) gets `index.html`; any other path stays a 404. Mounted after `/apiv1`, so it
 * never answers an API path.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import express, { type Router } from 'express';

const NOT_BUILT = '<!doctype html><title>DeviceLab</title><p>The dashboard is not built: run <code>npm run demo</code> or '
  + '<code>node scripts/bootstrap.mjs</code> (it builds <code>web/dist</code>). The REST API is at <a href="/apiv1/Service">/apiv1</a>.';

/** The client routes of `web/src/app.tsx`. */
const DASHBOARD_PAGES = /^\/(devices\/[^/]+|apps|calendar|lab)?\/?$/;

export function staticWebRouter(distDir: string): Router {
  const router = express.Router();
  const index = path.join(distDir, 'index.html');
  router.use(express.static(distDir, {
    index: false,
    redirect: false,
    setHeaders(res, filePath) {
      const hashed = filePath.startsWith(path.join(distDir, 'assets') + path.sep);
      res.set('Cache-Control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
      res.set('X-Content-Type-Options', 'nosniff');
    },
  }));
  router.get(DASHBOARD_PAGES, (req, res, next) => {
    if (!req.accepts('html')) return next();
    res.set('Cache-Control', 'no-cache');
    res.set('X-Content-Type-Options', 'nosniff');
    res.set('Content-Security-Policy', "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'");
    if (!existsSync(index)) return res.status(200).type('html').send(NOT_BUILT);
    res.sendFile(index, (err) => err && next(err));
  });
  return router;
}
