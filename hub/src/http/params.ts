/**
 * Request parameters as every real client sends them (wire rules 1-4, 7-9, docs/wire-rules.md): query string merged
 * with an `application/x-www-form-urlencoded` body, names case-insensitive, `+` decoded as a space, an empty value
 * meaning "omitted". Typed readers throw ApiFailure with the vendor's error texts, which real clients match exactly;
 * the code and the parameter's name travel beside the text (`errorCode`, `errorParameter`).
 */
import type { Request } from 'express';
import {
  ApiFailure, isWithinRequestDateRange, parseEnumValue, parseGuid, parseRequestDate, REQUEST_DATE_RANGE_TEXT,
  type ParsedRequestDate,
} from '@devicelab/shared';
import { echo } from './echo';

const VERBS = ['update', 'delete', 'add', 'get'] as const;
export type Verb = (typeof VERBS)[number];

/**
 * Keys every endpoint knows besides its own: the C# client's `get=` marker on every call (rule 2), `pretty`
 * (rule 11) and `wait`, which the QA suite also sends to synchronous operations (rule 9).
 */
const UNIVERSAL_KEYS: readonly string[] = ['get', 'pretty', 'wait'];

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

export const BAD_BOOLEAN = 'Value is not equivalent to either TrueString or FalseString.';
export const BAD_INT32 = 'Input string was not in a correct format.';
const invalidGuid = (value: string): string => `Invalid Guid format: ${echo(value)}`;
const enumValueNotFound = (value: string): string => `The requested value '${echo(value)}' was not found.`;
const nulInParameter = (name: string): string => `Parameter '${echo(name)}' must not contain a NUL character.`;
const dateOutOfRange = (name: string, value: string): string =>
  `Parameter '${name}' is out of range: '${echo(value)}'. Dates from ${REQUEST_DATE_RANGE_TEXT} are accepted.`;
const unknownParameter = (name: string, route: string): string =>
  `Unknown parameter '${echo(name)}' for ${route}.`;

export class RequestParams {
  /** lower-case name -> raw value ('' when sent without value); the first occurrence wins. */
  private readonly values = new Map<string, string>();
  /** Names as the client spelled them, in order of appearance (lower-case key -> spelling). */
  private readonly spellings = new Map<string, string>();

  /** `sources` are urlencoded texts (query string without `?`, form body); earlier sources win on duplicates. */
  static fromUrlEncoded(...sources: (string | undefined)[]): RequestParams {
    const params = new RequestParams();
    for (const source of sources) {
      if (!source) continue;
      // URLSearchParams decodes `+` as a space and never throws on malformed `%` escapes.
      for (const [name, value] of new URLSearchParams(source)) params.set(name, value);
    }
    return params;
  }

  private set(name: string, value: string): void {
    const key = name.trim().toLowerCase();
    if (key === '' || this.values.has(key)) return;
    this.values.set(key, value);
    this.spellings.set(key, name.trim());
  }

  /** Whether the name was sent at all, even with an empty value (verb keys: `?add`, `get=`). */
  has(name: string): boolean {
    return this.values.has(name.toLowerCase());
  }

  /**
   * The value, or undefined when absent or empty (empty = omitted, rule 4). A NUL character is refused here, when
   * the value is used: PostgreSQL text cannot hold it, and no client has a reason to send one.
   */
  string(name: string): string | undefined {
    const key = name.toLowerCase();
    const value = this.values.get(key);
    if (value === undefined || value === '') return undefined;
    if (value.includes('\u0000')) throw this.invalid(name, nulInParameter(this.spelling(name)));
    return value;
  }

  /** The name as the client spelled it (cut like any text we echo: an unknown key can be of any length). */
  private spelling(name: string): string {
    return echo(this.spellings.get(name.toLowerCase()) ?? name);
  }

  private invalid(name: string, message: string): ApiFailure {
    return new ApiFailure(message, 'INVALID_PARAMETER', this.spelling(name));
  }

  /** First present (non-empty) of several alternative names. */
  stringOf(...names: string[]): string | undefined {
    for (const name of names) {
      const value = this.string(name);
      if (value !== undefined) return value;
    }
    return undefined;
  }

  guid(name: string): string | undefined {
    const value = this.string(name);
    if (value === undefined) return undefined;
    const guid = parseGuid(value);
    if (!guid) throw this.invalid(name, invalidGuid(value));
    return guid;
  }

  bool(name: string): boolean | undefined {
    const value = this.string(name);
    if (value === undefined) return undefined;
    const parsed = booleanOf(value);
    if (parsed === undefined) throw this.invalid(name, BAD_BOOLEAN);
    return parsed;
  }

  enum<T extends string>(name: string, values: readonly T[], aliases: Record<string, T> = {}): T | undefined {
    const value = this.string(name);
    if (value === undefined) return undefined;
    const parsed = parseEnumValue(values, value, aliases);
    if (!parsed) throw this.invalid(name, enumValueNotFound(value));
    return parsed;
  }

  int(name: string): number | undefined {
    const value = this.string(name);
    if (value === undefined) return undefined;
    const parsed = int32Of(value);
    if (parsed === undefined) throw this.invalid(name, BAD_INT32);
    return parsed;
  }

  date(name: string): ParsedRequestDate | undefined {
    const value = this.string(name);
    if (value === undefined) return undefined;
    const parsed = parseRequestDate(value);
    if (!parsed) throw this.invalid(name, `String '${echo(value)}' was not recognized as a valid DateTime.`);
    if (!isWithinRequestDateRange(parsed.date)) throw this.invalid(name, dateOutOfRange(this.spelling(name), value));
    return parsed;
  }

  /** `wait` blocks only for a true-ish boolean; anything else (`wait=5000`) is ignored (rule 9). */
  wait(): boolean {
    return lenientTrue(this.string('wait'));
  }

  /** `pretty=true` indents the response; a bad value is ignored rather than failing the request. */
  pretty(): boolean {
    return lenientTrue(this.string('pretty'));
  }

  /** The verb key present (`update`, `delete`, `add`, `get`), or the legacy `verb=<name>` form. */
  verb(): Verb | undefined {
    const found = VERBS.find((v) => this.has(v));
    if (found) return found;
    const legacy = this.string('verb')?.trim().toLowerCase();
    return VERBS.find((v) => v === legacy);
  }

  /** `action=<name>`, lower-cased (action names are case-insensitive). */
  action(): string | undefined {
    return this.string('action')?.trim().toLowerCase();
  }

  /**
   * Fails naming the first key with a value that is not in `known` (lower-case names) nor a universal key
   * (rule 24): an ignored filter would answer as if the caller had asked for everything. A key without a value
   * is omitted (rule 4), so the C# client's empty optional keys pass.
   */
  assertKnownKeys(known: ReadonlySet<string>, route: string): void {
    for (const [key, value] of this.values) {
      if (value === '' || known.has(key) || UNIVERSAL_KEYS.includes(key)) continue;
      const name = this.spelling(key);
      throw new ApiFailure(unknownParameter(name, route), 'UNKNOWN_PARAMETER', name);
    }
  }
}

export function parseBoolean(text: string): boolean {
  const parsed = booleanOf(text);
  if (parsed === undefined) throw new ApiFailure(BAD_BOOLEAN);
  return parsed;
}

export function parseInt32(text: string): number {
  const parsed = int32Of(text);
  if (parsed === undefined) throw new ApiFailure(BAD_INT32);
  return parsed;
}

function booleanOf(text: string): boolean | undefined {
  const value = text.trim().toLowerCase();
  return value === 'true' ? true : value === 'false' ? false : undefined;
}

/** .NET `int.Parse`: optional sign, ASCII digits (leading zeros allowed), within the 32-bit range. */
function int32Of(text: string): number | undefined {
  const value = text.trim();
  const n = /^[+-]?\d+$/.test(value) ? Number(value) : NaN;
  return Number.isInteger(n) && n >= INT32_MIN && n <= INT32_MAX ? n : undefined;
}

function lenientTrue(value: string | undefined): boolean {
  return value !== undefined && value.trim().toLowerCase() === 'true';
}

export function isFormBody(req: Request): boolean {
  return /^application\/x-www-form-urlencoded\b/i.test(req.get('content-type') ?? '');
}

/** Each request's parameters as read, with the body they were read with (read again once a body arrives). */
const readParams = new WeakMap<Request, { body: unknown; params: RequestParams }>();

/**
 * The parameters of a request: its raw query string, then an urlencoded body (already read as text). Read once per
 * request (the unknown-key check, the handler and the failure writers all ask).
 */
export function requestParams(req: Request): RequestParams {
  const known = readParams.get(req);
  if (known && known.body === req.body) return known.params;
  const url = req.originalUrl ?? req.url;
  const q = url.indexOf('?');
  const query = q >= 0 ? url.slice(q + 1) : '';
  const body = typeof req.body === 'string' && isFormBody(req) ? req.body : undefined;
  const params = RequestParams.fromUrlEncoded(query, body);
  readParams.set(req, { body: req.body, params });
  return params;
}

/** `pretty=true` for answers written outside `handle` (401, 404, errors): never fails, a bad value means compact. */
export function prettyRequested(req: Request): boolean {
  try {
    return requestParams(req).pretty();
  } catch {
    return false;
  }
}
