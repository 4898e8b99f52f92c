/**
 * A request that may write (any method but GET, HEAD and OPTIONS) tells the kept reads (events/kept-reads.ts) when
 * it starts and again just before its answer goes out, after whatever it wrote committed: a client that reads
 * right after its own write gets what it wrote, without waiting for the change notice to come back from PostgreSQL.
 */
import type { RequestHandler } from 'express';
import type { KeptReads } from '../events/kept-reads';

const READ_ONLY_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function localWrites(kept: KeptReads): RequestHandler {
  return (req, res, next) => {
    if (READ_ONLY_METHODS.has(req.method)) return next();
    kept.noteLocalWrite();
    const end = res.end;
    res.end = function endAfterNoting(this: typeof res, ...args: unknown[]) {
      kept.noteLocalWrite();
      return (end as (...a: unknown[]) => typeof res).apply(this, args);
    } as typeof res.end;
    next();
  };
}
