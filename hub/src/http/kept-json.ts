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
  /** The gzip form once made. */
  gzippedBytes?: Buffer;
}

const bodies = new WeakMap<object, KeptBody>();

function keptBody(value: object): KeptBody {
  let body = bodies.get(value);
  if (!body) {
    const json = Buffer.from(serialize(value, false));
    // Weak: the same ETag stands for the identity and the gzip encoding of the same JSON.
    body = { json, etag: `W/"${createHash('sha1').update(json).digest('base64url')}"` };
    bodies.set(value, body);
  }
  return body;
}

export async function writeKeptJson(req: Request, res: Response, value: object, pretty: boolean): Promise<void> {
  if (pretty) {
    writeJson(res, 200, value, true);
    return;
  }
  if (writeKeptJsonNow(req, res, value)) return;
  const body = keptBody(value);
  body.gzipped ??= gzipAsync(body.json).then((bytes) => (body.gzippedBytes = bytes));
  await body.gzipped;
  writeKeptJsonNow(req, res, value);
}

/** Writes the compact answer when it is at hand (false: its gzip form, asked for, is not made yet). */
export function writeKeptJsonNow(req: Request, res: Response, value: object): boolean {
  const body = keptBody(value);
  const headers: Record<string, string | number> = {
    ETag: body.etag, Vary: 'Accept-Encoding', 'Content-Type': 'application/json; charset=utf-8',
  };
  if (matchesIfNoneMatch(req.headers['if-none-match'], body.etag)) {
    res.writeHead(304, headers).end();
    return true;
  }
  let bytes = body.json;
  if (bytes.length >= GZIP_MIN_BYTES && req.headers['accept-encoding'] !== undefined
    && req.acceptsEncodings('gzip', 'identity') === 'gzip') {
    if (body.gzippedBytes === undefined) return false;
    bytes = body.gzippedBytes;
    headers['Content-Encoding'] = 'gzip';
  }
  headers['Content-Length'] = bytes.length;
  res.writeHead(200, headers).end(bytes);
  return true;
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
