/**
 * A request that may write (any method but GET, HEAD and OPTIONS) tells the kept reads (events/kept-reads.ts) when
 * it starts and again just before its answer goes out, after whatever it wrote committed: a client that reads
 * right after its own write gets what it wrote, without waiting for the change notice to come back from PostgreSQL.
 * While other replicas are live, the answer then waits `writeSettleMs` (the kept reads' window): a request that
 * starts after it, on any replica, is one whose replica has proven it heard the write.
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
      const settle = kept.writeSettleMs();
      if (settle <= 0) return (end as (...a: unknown[]) => typeof res).apply(this, args);
      setTimeout(() => (end as (...a: unknown[]) => typeof res).apply(this, args), settle);
      return this;
    } as typeof res.end;
    next();
  };
}
