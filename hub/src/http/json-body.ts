/**
 * Lenient JSON bodies of update/add requests (wire rule 5, docs/wire-rules.md): JSON5 syntax (unquoted keys), keys
 * matched case-insensitively, string values accepted for booleans and numbers (`{"Enabled":"False"}`,
 * `{slotNumber:"1777"}`).
 *
 * Hostile bodies cost the event loop, so a body is bounded before it is parsed: a linear scan refuses nesting
 * deeper than MAX_JSON_DEPTH and more than MAX_JSON_ITEMS values, strict `JSON.parse` (fast) is tried first, and
 * only a body it refuses that is at most MAX_LENIENT_JSON_CHARS long goes to JSON5 (far slower: a 1 MB body held
 * the loop for over a second).
 */
import type { Request } from 'express';
import JSON5 from 'json5';
import { ApiFailure } from '@devicelab/shared';
import { BAD_BOOLEAN, BAD_INT32, isFormBody, parseBoolean, parseInt32 } from './params';

const NUL_IN_BODY = 'Invalid JSON body: text must not contain a NUL character (\\u0000).';
/** Models are flat objects with a list at most; these leave room for any client's wrapping. */
export const MAX_JSON_DEPTH = 32;
/** Members and array elements in all: V8 spends about a millisecond per hundred distinct keys of one object. */
export const MAX_JSON_ITEMS = 1000;
export const MAX_LENIENT_JSON_CHARS = 64 * 1024;
export const TOO_DEEP = `Invalid JSON body: nested deeper than ${MAX_JSON_DEPTH} levels.`;
export const TOO_MANY_ITEMS = `Invalid JSON body: more than ${MAX_JSON_ITEMS} members and array elements.`;

/**
 * Refuses a body that nests too deep or holds too many items, in one pass without parsing: brackets count depth,
 * `,` and `:` count items. Strings (both quote kinds) and JSON5 comments are skipped, so what they hold does not
 * count.
 */
export function checkShape(text: string): void {
  let depth = 0;
  let items = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x5b) { // { [
      if (++depth > MAX_JSON_DEPTH) throw new ApiFailure(TOO_DEEP);
    } else if (c === 0x7d || c === 0x5d) { // } ]
      if (depth > 0) depth--;
    } else if (c === 0x2c || c === 0x3a) { // , :
      if (++items > MAX_JSON_ITEMS) throw new ApiFailure(TOO_MANY_ITEMS);
    } else if (c === 0x22 || c === 0x27) { // " '
      for (i++; i < text.length && text.charCodeAt(i) !== c; i++) if (text.charCodeAt(i) === 0x5c) i++;
    } else if (c === 0x2f && text.charCodeAt(i + 1) === 0x2f) { // line comment
      while (i < text.length && text.charCodeAt(i) !== 0x0a) i++;
    } else if (c === 0x2f && text.charCodeAt(i + 1) === 0x2a) { // block comment
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 1;
    }
  }
}

/** Strict JSON, else (small bodies only) JSON5; the error text is the parser's. */
function parseBounded(text: string): unknown {
  checkShape(text);
  try {
    return JSON.parse(text);
  } catch (strictError) {
    if (text.length > MAX_LENIENT_JSON_CHARS) {
      const size = `${MAX_LENIENT_JSON_CHARS / 1024} KiB`;
      throw new ApiFailure(`Invalid JSON body: ${(strictError as Error).message}. A body over ${size} must be strict JSON (quoted keys).`);
    }
  }
  try {
    return JSON5.parse(text);
  } catch (err) {
    throw new ApiFailure(`Invalid JSON body: ${(err as Error).message}`);
  }
}

/** PostgreSQL text cannot hold NUL; such a body is refused whole, before any of it is used. */
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
    const value = parseBounded(trimmed);
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
