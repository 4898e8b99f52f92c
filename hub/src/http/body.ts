/**
 * Reads text bodies (urlencoded forms, JSON, plain text) into `req.body` as a string; the parameter reader and
 * the lenient JSON parser decode them. Multipart bodies are left to the upload middleware.
 */
import express, { type RequestHandler } from 'express';

export function textBody(limitBytes = 1024 * 1024): RequestHandler {
  return express.text({
    limit: limitBytes,
    type: ['application/x-www-form-urlencoded', 'application/json', 'application/*+json', 'text/*'],
    defaultCharset: 'utf-8',
  });
}
