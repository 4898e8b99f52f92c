/**
 * Lenient JSON bodies of update/add requests (wire-decisions rule 5): JSON5 syntax (unquoted keys), keys matched
 * case-insensitively, string values accepted for booleans and numbers (`{"Enabled":"False"}`, `{slotNumber:"1777"}`).
 */
import type { Request } from 'express';
import JSON5 from 'json5';
import { ApiFailure } from '@devicelab/shared';
import { BAD_BOOLEAN, BAD_INT32, isFormBody, parseBoolean, parseInt32 } from './params';

export const NUL_IN_BODY = 'Invalid JSON body: text must not contain a NUL character (\\u0000).';

/**
 * PostgreSQL text cannot hold NUL; such a body is refused whole, before any of it is used. Walked without
 * recursion: JSON5 parses arbitrarily deep nesting, and a deep body must not overflow the stack here.
 */
function containsNul(root: unknown): boolean {
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return true;
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        if (key.includes('\u0000')) return true;
        pending.push(item);
      }
    }
  }
  return false;
}

export class JsonBody {
  private readonly entries = new Map<string, unknown>();
  private readonly spellings = new Map<string, string>();

  constructor(object: Record<string, unknown>) {
    for (const [name, value] of Object.entries(object)) {
      const key = name.toLowerCase();
      if (this.entries.has(key)) continue;
      this.entries.set(key, value);
      this.spellings.set(key, name);
    }
  }

  /** Parses body text; empty text is an empty object. Anything but an object is a failure. */
  static parse(text: string | undefined): JsonBody {
    const trimmed = (text ?? '').trim();
    if (trimmed === '') return new JsonBody({});
    let value: unknown;
    try {
      value = JSON5.parse(trimmed);
    } catch (err) {
      throw new ApiFailure(`Invalid JSON body: ${(err as Error).message}`);
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new ApiFailure('Invalid JSON body: an object is expected.');
    }
    if (containsNul(value)) throw new ApiFailure(NUL_IN_BODY);
    return new JsonBody(value as Record<string, unknown>);
  }

  has(name: string): boolean {
    return this.entries.has(name.toLowerCase());
  }

  /** Lower-case names present in the body. */
  keys(): string[] {
    return [...this.entries.keys()];
  }

  raw(name: string): unknown {
    return this.entries.get(name.toLowerCase());
  }

  /** A string value (numbers and booleans are turned into text); null stays null, absent is undefined. */
  string(name: string): string | null | undefined {
    const value = this.raw(name);
    if (value === undefined || value === null) return value as null | undefined;
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    throw new ApiFailure(`Invalid value for '${this.spellings.get(name.toLowerCase()) ?? name}'.`);
  }

  bool(name: string): boolean | undefined {
    const value = this.raw(name);
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value === 'boolean') return value;
    if (typeof value === 'string') return parseBoolean(value);
    throw new ApiFailure(BAD_BOOLEAN);
  }

  int(name: string): number | null | undefined {
    const value = this.raw(name);
    if (value === undefined) return undefined;
    if (value === null || value === '') return null;
    if (typeof value === 'number' && Number.isInteger(value)) return parseInt32(String(value));
    if (typeof value === 'string') return parseInt32(value);
    throw new ApiFailure(BAD_INT32);
  }

  stringArray(name: string): string[] | undefined {
    const value = this.raw(name);
    if (value === undefined || value === null) return undefined;
    if (Array.isArray(value)) return value.map((v) => String(v));
    if (typeof value === 'string') return value.split(',').map((v) => v.trim()).filter((v) => v !== '');
    throw new ApiFailure(`Invalid value for '${name}'.`);
  }
}

/** The body is read only after the entitlement checks, so a caller without rights learns nothing from parsing. */
export type BodyReader = () => JsonBody;

/**
 * The JSON body, read on demand (after the entitlement checks). A urlencoded body carries parameters, not a
 * model (the C# client's `AddUser` sends only `add=`), so it reads as an empty object and the domain reports
 * what is missing; but text that starts with `{` is JSON whatever its label (`curl -d '{...}'` without a
 * Content-Type header labels it urlencoded).
 */
export function jsonBodyReader(req: Request, bodyText: string): BodyReader {
  return () => isFormBody(req) && !bodyText.trimStart().startsWith('{') ? new JsonBody({}) : JsonBody.parse(bodyText);
}
