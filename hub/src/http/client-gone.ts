/**
 * Calls `gone` once when the client of a long request goes away before its answer is written. Node's HTTP server
 * lets a half-closed connection (the client sent FIN: what an aborted fetch does) wait for its answer, so the
 * response's 'close' alone comes only after that answer was written into nothing; the socket's 'end' tells it at
 * once. No client that waits for an answer closes its sending side first. Returns what stops listening.
 */
import type { Response } from 'express';

export function onClientGone(res: Response, gone: () => void): () => void {
  const socket = res.req.socket;
  const left = () => { if (!res.writableEnded) gone(); };
  res.once('close', left);
  socket.once('end', left);
  if (socket.readableEnded) queueMicrotask(left);
  return () => {
    res.off('close', left);
    socket.off('end', left);
  };
}
