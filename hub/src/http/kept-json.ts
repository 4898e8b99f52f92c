/**
 * Writes a value the domain keeps between changes (the device lists, domain/device-list-cache.ts): its
 * serialised bytes, their ETag and their gzip form are made once per kept value and reused by every request
 * that gets the same value, which is what lets pollers be answered at nearly the speed of the wire. A client
 * sending the ETag back in If-None-Match gets 304 without a body; gzip when Accept-Encoding asks for it.
 * Any other value (a fresh list) goes through the same path, its bytes kept only as long as the value lives.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Request, Response } from 'express';
import { serialize, writeJson } from './respond';

const gzipAsync = promisify(gzip);
/** Below this a gzip saves too little to be worth the CPU. */
const GZIP_MIN_BYTES = 1024;

interface KeptBody {
  json: Buffer;
  etag: string;
  gzipped?: Promise<Buffer>;
}

const bodies = new WeakMap<object, KeptBody>();

export async function writeKeptJson(req: Request, res: Response, value: object, pretty: boolean): Promise<void> {
  if (pretty) {
    writeJson(res, 200, value, true);
    return;
  }
  let body = bodies.get(value);
  if (!body) {
    const json = Buffer.from(serialize(value, false));
    // Weak: the same ETag stands for the identity and the gzip encoding of the same JSON.
    body = { json, etag: `W/"${createHash('sha1').update(json).digest('base64url')}"` };
    bodies.set(value, body);
  }
  res.setHeader('ETag', body.etag);
  res.setHeader('Vary', 'Accept-Encoding');
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  if (matchesIfNoneMatch(req.headers['if-none-match'], body.etag)) {
    res.status(304).end();
    return;
  }
  let bytes = body.json;
  if (bytes.length >= GZIP_MIN_BYTES && req.acceptsEncodings('gzip', 'identity') === 'gzip') {
    body.gzipped ??= gzipAsync(body.json);
    bytes = await body.gzipped;
    res.setHeader('Content-Encoding', 'gzip');
  }
  res.status(200).setHeader('Content-Length', bytes.length);
  res.end(bytes);
}

/** RFC 9110 13.1.2: weak comparison against each listed tag, or `*`. */
function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const opaque = etag.replace(/^W\//, '');
  return header.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed.replace(/^W\//, '') === opaque;
  });
}
