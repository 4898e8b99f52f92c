/**
 * Response writer (wire rules 10-13, docs/wire-rules.md): keys with null/undefined values omitted at every depth,
 * `isSuccess` first then `errorMessage`, compact unless `pretty=true` (2-space indent, `"key": value`).
 */
import type { Response } from 'express';
import { failure, formatWireDate, type ApiFailure } from '@devicelab/shared';
import { boundedFailureMessage } from './echo';

/** Turns a value into its wire form: nulls dropped from objects, Dates formatted, Result keys ordered. */
export function toWire(value: unknown): unknown {
  if (value === null || value === undefined) return undefined;
  if (value instanceof Date) return formatWireDate(value);
  if (Array.isArray(value)) return value.map((item) => toWire(item) ?? null);
  if (typeof value !== 'object') return value;
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const keys = Object.keys(source);
  const ordered = 'isSuccess' in source
    ? ['isSuccess', 'errorMessage', ...keys.filter((k) => k !== 'isSuccess' && k !== 'errorMessage')]
    : keys;
  for (const key of ordered) {
    const wire = toWire(source[key]);
    if (wire !== undefined) out[key] = wire;
  }
  return out;
}

export function serialize(value: unknown, pretty: boolean): string {
  const wire = toWire(value);
  return JSON.stringify(wire === undefined ? null : wire, null, pretty ? 2 : undefined);
}

export function writeJson(res: Response, status: number, value: unknown, pretty = false): void {
  res.status(status).type('application/json; charset=utf-8').send(serialize(value, pretty));
}

export function writeFailure(res: Response, status: number, message: string, pretty = false): void {
  writeJson(res, status, failure(boundedFailureMessage(message)), pretty);
}

/**
 * A business failure as its failure Result (HTTP 200): its text, its code as `errorCode` and the parameter at fault
 * as `errorParameter` when it has them.
 */
export function writeApiFailure(res: Response, err: ApiFailure, pretty = false): void {
  writeJson(res, 200, failure(boundedFailureMessage(err.message), err.code, err.parameter), pretty);
}
