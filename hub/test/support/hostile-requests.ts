/**
 * Hostile HTTP requests for every endpoint and parameter the API describes (`ENDPOINTS`, which the OpenAPI test
 * keeps equal to the mounted routes): the described parameters with hostile values, in the query or a form body,
 * names in any case, duplicated, as arrays, with unknown keys beside them; JSON bodies with hostile values,
 * duplicated and unknown keys, deep nesting, broken syntax; wrong content types; random multipart.
 */
import fc from 'fast-check';
import { ENDPOINTS, type EndpointDescription, type OperationDescription } from '../../src/api/openapi/endpoints';
import { hostileJsonValue, hostileText, paramValue, scrambledCase, type LabPools } from './hostile-values';

export interface HostileRequest {
  method: 'GET' | 'POST' | 'DELETE';
  /** Under /apiv1. */
  path: string;
  /** Already percent-encoded (it may hold malformed escapes on purpose). */
  query: string;
  body?: string | Buffer;
  contentType?: string;
}

/** Percent-encodes every byte of the UTF-8 text (lone surrogates become U+FFFD, as a browser sends them). */
const encode = (text: string): string =>
  [...Buffer.from(text, 'utf8')].map((b) => (/[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b)
    : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');

const rawEscape = fc.constantFrom('%', '%Z', '%ZZ', '%FF', '%C0%80', '%ED%A0%80', '%u0041', '+', '&', '=', '==', '&&');

/** One `name=value` pair as sent: the value encoded (or a malformed escape), the name in any case, `[]` sometimes. */
function pair(name: string, value: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.tuple(scrambledCase(name), value, fc.boolean(), fc.nat(19)).map(([n, v, array, shape]) => {
    if (shape === 0) return `${n}`; // no `=`: a verb-like key
    if (shape === 1) return `${n}=`;
    return `${n}${array && shape === 2 ? '[]' : ''}=${encode(v)}`;
  });
}

/** Every required parameter mostly; optional ones often (`sparse`: seldom, so fewer checks stand in the way). */
function paramPairs(op: OperationDescription, pools: LabPools, sparse: boolean): fc.Arbitrary<string[]> {
  const params = op.params ?? [];
  const described = params.map((param) => fc.oneof(
    { weight: param.required ? 1 : sparse ? 8 : 2, arbitrary: fc.constant(null) },
    // Twice: a duplicated key.
    { weight: param.required ? 19 : 2, arbitrary: fc.array(pair(param.name, paramValue(param, pools, 2 + params.length)), { minLength: 1, maxLength: 2 }) },
  ));
  const unknown = fc.array(fc.tuple(fc.string({ minLength: 1, maxLength: 12 }), hostileText)
    .map(([name, value]) => `${encode(name)}=${encode(value)}`), { maxLength: 2 });
  const extras = fc.array(fc.oneof(rawEscape, pair('pretty', fc.constantFrom('true', 'maybe')), pair('wait', hostileText)),
    { maxLength: 2 });
  return fc.tuple(fc.tuple(...described), unknown, extras).chain(([found, u, e]) => {
    const all = [...found.flatMap((x) => x ?? []), ...u, ...e];
    return fc.shuffledSubarray(all, { minLength: all.length });
  });
}

/** The operation's selector (`action=retain`, `update`) as sent, or a hostile one now and then. */
function selector(op: OperationDescription): fc.Arbitrary<string[]> {
  if (op.select === '') return fc.constant([]);
  const [key, value] = op.select.split('=');
  const usual = value === undefined ? scrambledCase(key) : scrambledCase(value).map((v) => `${key}=${v}`);
  return fc.oneof({ arbitrary: usual.map((s) => [s]), weight: 8 },
    { arbitrary: fc.tuple(usual, pair('action', hostileText)).map(([s, a]) => [s, a]), weight: 1 },
    { arbitrary: pair('action', hostileText).map((a) => [a]), weight: 1 });
}

const jsonText = (value: unknown): string => JSON.stringify(value) ?? 'null';

/** A JSON (or JSON-ish) body for a model with `keys`. */
function jsonBody(keys: string[]): fc.Arbitrary<string> {
  const member = fc.tuple(fc.oneof(fc.constantFrom(...(keys.length > 0 ? keys : ['name'])).chain(scrambledCase),
    hostileText), hostileJsonValue);
  const object = fc.array(member, { maxLength: 6 });
  return fc.oneof(
    { weight: 5, arbitrary: object.map((members) => `{${members.map(([k, v]) => `${jsonText(k)}:${jsonText(v)}`).join(',')}}`) },
    // Unquoted keys (JSON5), duplicated keys as text.
    { weight: 2, arbitrary: object.map((members) => `{${[...members, ...members].map(([k, v]) => `${/^\w+$/.test(k) ? k : jsonText(k)}:${jsonText(v)}`).join(',')}}`) },
    { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 20, max: 100_000 }), fc.constantFrom('[', '{"a":')).map(([depth, open]) =>
      `${open.repeat(depth)}1${(open === '[' ? ']' : '}').repeat(depth)}`) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map(jsonText) },
    { weight: 1, arbitrary: fc.tuple(object, fc.nat(40)).map(([members, cut]) => jsonText(Object.fromEntries(members)).slice(0, cut)) },
    { weight: 1, arbitrary: fc.integer({ min: 500, max: 30_000 }).map((n) => `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',')}}`) },
    { weight: 1, arbitrary: hostileText },
  );
}

/** Random multipart: parts with random names, file names and a few bytes (never a zip: uploads are fuzzed apart). */
const multipart = fc.record({
  boundary: fc.constantFrom('XYZ', 'a'.repeat(70), '--', ' '),
  parts: fc.array(fc.record({
    name: hostileText, filename: fc.option(fc.oneof(fc.constantFrom('a.apk', 'b.ipa', '../../x.apk', 'a\u0000.apk', '.apk'), hostileText)),
    bytes: fc.uint8Array({ maxLength: 512 }).map((b) => Buffer.concat([Buffer.from('x'), Buffer.from(b)])),
  }), { maxLength: 3 }),
  closed: fc.boolean(),
}).map(({ boundary, parts, closed }) => ({
  contentType: `multipart/form-data; boundary=${boundary}`,
  body: Buffer.concat([...parts.map((part) => Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"${part.filename === null ? '' : `; filename="${part.filename}"`}\r\n\r\n`),
    part.bytes, Buffer.from('\r\n')])), Buffer.from(closed ? `--${boundary}--\r\n` : '')]),
}));

const wrongContentType = fc.constantFrom('text/xml', 'application/octet-stream', 'application/json; charset=utf-16',
  'application/json; charset=nope', 'text/plain', 'multipart/form-data', 'application/x-www-form-urlencoded; charset=latin1', '');

function request(endpoint: EndpointDescription, op: OperationDescription, pools: LabPools): fc.Arbitrary<HostileRequest> {
  const method = ({ get: 'GET', post: 'POST', delete: 'DELETE' } as const)[endpoint.method];
  return fc.record({
    select: selector(op), params: fc.boolean().chain((sparse) => paramPairs(op, pools, sparse)), inForm: fc.boolean(),
    body: fc.oneof(
      { weight: op.body === 'json' ? 6 : 1, arbitrary: fc.tuple(jsonBody(op.bodyKeys ?? []), fc.constantFrom('application/json', 'application/json', 'text/plain', undefined))
        .map(([body, contentType]) => ({ body: body as string | Buffer, contentType })) },
      { weight: op.body === 'multipart' ? 6 : 1, arbitrary: multipart },
      { weight: 1, arbitrary: fc.tuple(hostileText, wrongContentType).map(([body, contentType]) => ({ body: body as string | Buffer, contentType })) },
      { weight: 2, arbitrary: fc.constant(undefined) },
    ),
  }).map(({ select, params, inForm, body }): HostileRequest => {
    const query = [...select, ...params].join('&');
    if (method !== 'POST') return { method, path: endpoint.path, query };
    // C# style: every parameter in a form body, no query string.
    if (inForm && body === undefined) return { method, path: endpoint.path, query: '', body: query, contentType: 'application/x-www-form-urlencoded' };
    return { method, path: endpoint.path, query, ...body };
  });
}

/** A request for any operation of any endpoint, or to a path or method the API does not have. */
export function hostileRequest(pools: LabPools): fc.Arbitrary<HostileRequest> {
  // An operation with more parameters has more to get wrong: it is drawn more often.
  const operations = ENDPOINTS.flatMap((endpoint) => endpoint.operations.map((op) =>
    ({ arbitrary: request(endpoint, op, pools), weight: 1 + (op.params?.length ?? 0) + (op.body ? 3 : 0) })));
  const stray = fc.record({
    method: fc.constantFrom('GET' as const, 'POST' as const),
    path: fc.oneof(fc.constantFrom('/Device/', '/DEVICE', '/Device/../User', '/Device%00', '/Device/Metrics/x', '//Device', '/Async/1'),
      hostileText.map((text) => `/${encode(text)}`)),
    query: fc.array(pair('id', hostileText), { maxLength: 3 }).map((pairs) => pairs.join('&')),
  });
  return fc.oneof({ arbitrary: fc.oneof(...operations), weight: 20 }, { arbitrary: stray, weight: 1 });
}

/** How a request reads in a failure report (bodies cut short). */
export function describeRequest(r: HostileRequest): string {
  const body = r.body === undefined ? '' : ` body(${r.contentType ?? 'no type'}, ${r.body.length}): ${JSON.stringify(String(r.body).slice(0, 300))}`;
  return `${r.method} ${r.path}${r.query ? `?${r.query.slice(0, 600)}` : ''}${body}`;
}
