/**
 * Hostile parameter and JSON values for the API fuzz suite (fast-check arbitraries): numbers out of every range,
 * odd dates, unicode, NUL and control characters, very long text, SQL and path tricks, mixed with valid values
 * and real identifiers of the lab (so a request gets past "not found" into the code behind it).
 */
import fc from 'fast-check';
import type { ParamDescription } from '../../src/api/openapi/endpoints';

/** Real identifiers of the lab under test, and names the metrics and role code knows. */
export interface LabPools {
  deviceIds: string[];
  /** Serial numbers and vendor ids: device identifiers too. */
  deviceNames: string[];
  /** Guids of users, roles, ... the fuzzing user may act on (never its own: a new token would lock it out). */
  guids: string[];
}

const NUMBERS = ['0', '-0', '1', '-1', '2147483647', '2147483648', '-2147483648', '-2147483649', '4294967296',
  '9007199254740993', '1e309', '-1e309', '1e-400', 'NaN', 'Infinity', '-Infinity', '0x10', '0b1', '1_000', '1.5',
  '-0.0', ' 7 ', '+5', '07', '١٢', '１２', '9'.repeat(400)];
const DATES = ['0000-01-01T00:00:00Z', '9999-12-31T23:59:59-23:59', '9999-12-31T23:59:59Z', '0001-01-01T00:00:00+23:59',
  '0001-01-01', '9999-12-31', '0050-06-01', '1/1/0001 12:00:00 AM', '12/31/9999 11:59:59 PM', '2/29/2023', '2026-02-30',
  '2026-11-22T24:00:00', '2026-11-22T23:59:60Z', '2026-11-22T10:00:00.9999999', '2026-11-22T10:00:00+99:99',
  '+275760-09-13T00:00:00Z', '-000001-01-01T00:00:00Z', '2026-11-22 10:00', '13/13/2026', 'T', '1970-01-01T00:00:00Z'];
const TEXTS = ['', ' ', '\u0000', 'a\u0000b', '\u0001\u001f\u007f', '\r\n', '\t', '%', '%00', '_', '*', '\\', '"', "'",
  "' OR '1'='1", '1; DROP TABLE devices; --', '../../etc/passwd', '<script>', '${jndi:x}', '💥', '\u202e', '\ufeff',
  'ＯＮＬＩＮＥ', 'İ', 'ß', 'null', 'undefined', 'true', 'false', '[]', '{}', '__proto__', 'constructor', 'toString'];
/** Words the code behind a string parameter knows, by parameter name (lower case): they get a request deep. */
const WORDS: Record<string, string[]> = {
  table: ['sample', 'log', 'health_check', 'usb_hub', 'sample,log', 'log,sample,health_check,usb_hub', 'SAMPLE, log', 'sample,sample'],
  fields: ['Used', 'Memory: Used', 'used,log', 'device_id', 'time', 'elapsed_seconds,Used', 'is_error', 'failure_reason,Used', 'log'],
  groupby: ['device_id', 'is_error', 'Used', 'log', 'failure_reason'],
  aggr: ['count', 'mean', 'sum,mean,median,mode,spread,stddev,min,max,first,last', 'percentile_99.9', 'percentile_0', 'mode,first',
    'percentile_100', 'max,max'],
  orderby: ['time desc', 'time asc', 'time', 'TIME  DESC'],
  format: ['csv', 'default', 'CSV'],
  window: ['00:05:00', '1.00:00:00', '00:00:00', '-00:01:00', '99:99:99', '00:00:00.001', '10675199.02:48:05.4775807'],
  marker: ['session', 'run'],
  name: ['session', 'run', 'Victim', 'Tester'],
  id: ['LABHUB01', '*'],
};
const GENERAL_WORDS = ['Victim', 'Tester', 'victim@lab.test', 'run', 'Pixel 7', 'Android', 'com.example.app'];

const pick = <T>(values: readonly T[]): fc.Arbitrary<T> => fc.constantFrom(...values);

/** Letter case scrambled: names, enums and booleans are case-insensitive on the wire. */
export const scrambledCase = (text: string): fc.Arbitrary<string> =>
  fc.array(fc.boolean(), { minLength: text.length, maxLength: text.length })
    .map((upper) => [...text].map((c, i) => (upper[i] ? c.toUpperCase() : c.toLowerCase())).join(''));

const longText = fc.tuple(fc.constantFrom('a', 'é', '💥', ',', '\u0000', '%'), fc.integer({ min: 256, max: 3000 }))
  .map(([unit, n]) => unit.repeat(n));

/** A date in one of the request forms with fields from anywhere: years 0-99999, months 0-13, offsets to ±99:99. */
const oddDate = fc.record({
  y: fc.integer({ min: 0, max: 99_999 }), mo: fc.integer({ min: 0, max: 13 }), d: fc.integer({ min: 0, max: 32 }),
  h: fc.integer({ min: 0, max: 25 }), mi: fc.integer({ min: 0, max: 61 }), s: fc.integer({ min: 0, max: 61 }),
  offset: fc.option(fc.tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 99 }))),
  form: fc.constantFrom('iso', 'us', 'date'),
}).map(({ y, mo, d, h, mi, s, offset, form }) => {
  const p2 = (n: number) => String(n).padStart(2, '0');
  const year = String(y).padStart(4, '0');
  if (form === 'date') return `${year}-${p2(mo)}-${p2(d)}`;
  if (form === 'us') return `${mo}/${d}/${year} ${h % 13}:${p2(mi)}:${p2(s)} ${h > 12 ? 'PM' : 'AM'}`;
  const zone = offset === null ? '' : `${offset[0]}${p2(offset[1])}:${p2(offset[2])}`;
  return `${year}-${p2(mo)}-${p2(d)}T${p2(h)}:${p2(mi)}:${p2(s)}${zone}`;
});

/** Within a few days of now, where the lab's records are. */
const recentDate = fc.integer({ min: -3 * 86_400, max: 86_400 }).map((s) => new Date(Date.now() + s * 1000).toISOString());

/** Anything hostile, whatever the parameter. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  pick(TEXTS), pick(NUMBERS), pick(DATES), longText,
  fc.string({ unit: 'grapheme', maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)), maxLength: 10 }),
  fc.double().map(String), fc.bigInt().map(String),
);

/**
 * A value for a described parameter: hostile with odds 2 in `validWeight + 2`. A request carries a few hostile
 * values among valid ones, so most get past the first check into the code behind it.
 */
export function paramValue(param: ParamDescription, pools: LabPools, validWeight: number): fc.Arbitrary<string> {
  const valid: fc.Arbitrary<string>[] = [];
  switch (param.type) {
    case 'guid': valid.push(pick([...pools.guids, ...pools.deviceIds]), fc.uuid()); break;
    case 'deviceId': valid.push(pick([...pools.deviceIds, ...pools.deviceNames])); break;
    case 'bool': valid.push(pick(['true', 'false']).chain(scrambledCase)); break;
    case 'int': valid.push(fc.integer({ min: -5, max: 200 }).map(String)); break;
    case 'date': valid.push(recentDate, recentDate, oddDate, pick(DATES), fc.date({ noInvalidDate: true }).map((d) => d.toISOString())); break;
    case 'enum': valid.push(pick(param.values ?? ['x']).chain(scrambledCase)); break;
    case 'string': valid.push(pick([...(WORDS[param.name.toLowerCase()] ?? GENERAL_WORDS), ...pools.deviceNames])); break;
  }
  return fc.oneof({ arbitrary: fc.oneof(...valid), weight: validWeight }, { arbitrary: hostileText, weight: 2 });
}

/** A JSON value for a body key: scalars of every kind, arrays where scalars are expected, nesting. */
export const hostileJsonValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileText, fc.double(), fc.integer(), fc.boolean(), fc.constant(null), pick(['true', 'False', '1777', '-1']),
  fc.array(fc.oneof(hostileText, fc.integer()), { maxLength: 5 }),
  fc.jsonValue({ maxDepth: 4 }),
);
