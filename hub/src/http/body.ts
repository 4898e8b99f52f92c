/**
 * Reads text bodies (urlencoded forms, JSON, plain text) into `req.body` as a string; the parameter reader and
 * the lenient JSON parser decode them. Multipart bodies are left to the upload middleware.
 */
import express, { type RequestHandler } from 'express';

export function textBody(limitBytes = 1024 * 1024): RequestHandler {
  const read = express.text({
    limit: limitBytes,
    type: ['application/x-www-form-urlencoded', 'application/json', 'application/*+json', 'text/*'],
    defaultCharset: 'utf-8',
  });
  // A request without a body (most GETs: neither Content-Length nor Transfer-Encoding, RFC 9112 6.3) has nothing
  // to read: the parser's type and charset checks are skipped, as it would skip them itself after the same test.
  return (req, res, next) => {
    if (req.headers['transfer-encoding'] === undefined && req.headers['content-length'] === undefined) return next();
    read(req, res, next);
  };
}
