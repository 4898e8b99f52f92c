/**
 * The WebDriver wire (W3C WebDriver, as Appium clients speak it) where the hub answers itself: bounded reading of a
 * new-session body, and errors in the W3C shape `{"value":{"error","message","stacktrace"}}` with the status the
 * standard gives each error. The hub's failure codes map to W3C errors here.
 */
import type { NextFunction, Request, Response } from 'express';
import { ApiFailure, UNEXPECTED_ERROR_MESSAGE, type FailureCode, type Logger } from '@devicelab/shared';
import { isDatabaseUnavailable } from '../store/database';
import { RECORDS_STORE_RETRY_SECONDS, RECORDS_STORE_UNAVAILABLE } from './handler';
import { checkShape } from './json-body';

/** A new-session body is a few capabilities; a larger one is refused before it is parsed. */
export const MAX_NEW_SESSION_BYTES = 256 * 1024;

/** W3C error names and their HTTP status (WebDriver, "Errors"). */
const W3C_STATUS = {
  'invalid argument': 400,
  'invalid session id': 404,
  'unknown command': 404,
  'unknown method': 405,
  'session not created': 500,
  'unknown error': 500,
  'unable to set cookie': 500,
} as const;
export type W3cError = keyof typeof W3C_STATUS;

export function writeW3cError(
  res: Response, error: W3cError, message: string, options: { status?: number; headers?: Record<string, string> } = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.status(options.status ?? W3C_STATUS[error]).set({ 'cache-control': 'no-cache', ...options.headers }).type('application/json; charset=utf-8')
    .send(JSON.stringify({ value: { error, message, stacktrace: '' } }));
}

/** Failures of the lab as W3C errors: a refusal to create a session is `session not created`. */
const BY_CODE: Partial<Record<FailureCode, W3cError>> = {
  INVALID_CAPABILITIES: 'invalid argument',
  INVALID_PARAMETER: 'invalid argument',
  AUTOMATION_SESSION_NOT_FOUND: 'invalid session id',
  AUTOMATION_SESSION_ENDED: 'invalid session id',
};

export function writeApiFailureAsW3c(res: Response, failure: ApiFailure): void {
  writeW3cError(res, (failure.code && BY_CODE[failure.code]) || 'session not created', failure.message);
}

/**
 * Reads a JSON body of at most MAX_NEW_SESSION_BYTES, nesting and item counts bounded (json-body.ts) before
 * `JSON.parse`; anything else fails with INVALID_CAPABILITIES. A body over the size is not read further.
 */
export function readBoundedJson(req: Request, maxBytes = MAX_NEW_SESSION_BYTES): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    const tooLarge = () => new ApiFailure(`The request body is larger than ${maxBytes} bytes.`, 'INVALID_CAPABILITIES');
    if (Number.isFinite(declared) && declared > maxBytes) {
      req.resume(); // the answer goes out at once; the connection is closed after it (see the route)
      reject(tooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.off('data', onData);
        req.resume();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('error', reject);
    req.once('end', () => {
      if (size > maxBytes) return;
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
        checkShape(text);
      } catch (err) {
        reject(err instanceof ApiFailure ? new ApiFailure(err.message, 'INVALID_CAPABILITIES')
          : new ApiFailure('The request body is not UTF-8 text.', 'INVALID_CAPABILITIES'));
        return;
      }
      try {
        resolve(text.trim() === '' ? {} : JSON.parse(text));
      } catch (err) {
        reject(new ApiFailure(`The request body is not JSON: ${(err as Error).message.slice(0, 200)}`, 'INVALID_CAPABILITIES'));
      }
    });
  });
}

/** The WebDriver endpoint's catch-all: a bug answers 500 `unknown error`, a records outage 503, in W3C form. */
export function webDriverErrorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    if (err instanceof ApiFailure) return writeApiFailureAsW3c(res, err);
    if (isDatabaseUnavailable(err)) {
      return writeW3cError(res, 'unknown error', RECORDS_STORE_UNAVAILABLE, { status: 503, headers: { 'Retry-After': String(RECORDS_STORE_RETRY_SECONDS) } });
    }
    logger.error({ err, method: req.method, url: req.originalUrl.slice(0, 200) }, 'unhandled error in WebDriver request');
    writeW3cError(res, 'unknown error', UNEXPECTED_ERROR_MESSAGE);
  };
}
