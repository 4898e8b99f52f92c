/**
 * How long a request may take to arrive. Node's defaults let a client that sends its body a few bytes at a time
 * hold a connection for 300 s, yet would cut a 2 GB upload on a slow link that is really moving. Here: the headers
 * within `headersMs`; a body that is being read must bring at least `minBodyBytes` in every `bodyWindowMs` (a
 * stalled or trickled body is answered 408 and its connection closed); a whole request, however steady, within
 * `requestMs`.
 */
import type http from 'node:http';
import type { Response } from 'express';
import { writeFailure } from './respond';

export interface RequestDeadlines {
  headersMs: number;
  requestMs: number;
  bodyWindowMs: number;
  minBodyBytes: number;
}

export const DEFAULT_REQUEST_DEADLINES: RequestDeadlines = {
  headersMs: 20_000,
  requestMs: 2 * 60 * 60_000,
  bodyWindowMs: 10_000,
  minBodyBytes: 16 * 1024,
};

/** The server options that carry the headers and whole-request deadlines (checked every second). */
export function deadlineServerOptions(deadlines: RequestDeadlines): http.ServerOptions {
  return { headersTimeout: deadlines.headersMs, requestTimeout: deadlines.requestMs, connectionsCheckingInterval: 1000 };
}

export const tooSlow = (deadlines: RequestDeadlines): string => `The request body arrived too slowly (less than `
  + `${deadlines.minBodyBytes} bytes in ${deadlines.bodyWindowMs / 1000} s); the connection is closed.`;

/** Watches the pace of every request body the server reads. */
export function watchBodyPace(server: http.Server, deadlines: RequestDeadlines): void {
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
    if (!hasBody) return;
    let seen = req.socket.bytesRead;
    const timer = setInterval(() => {
      const moved = req.socket.bytesRead - seen;
      seen = req.socket.bytesRead;
      // A body nobody reads (left unread by the handler, or paused while a file is written) is not the client's stall.
      if (req.complete || req.readableFlowing !== true || moved >= deadlines.minBodyBytes) return;
      stop();
      if (!res.headersSent) {
        res.setHeader('Connection', 'close');
        writeFailure(res as Response, 408, tooSlow(deadlines));
      }
      res.once('finish', () => req.socket.destroy());
      if (res.writableFinished) req.socket.destroy();
    }, deadlines.bodyWindowMs);
    const stop = () => clearInterval(timer);
    req.once('end', stop);
    res.once('close', stop);
  });
}
