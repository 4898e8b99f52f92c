import { ApiFailure, failure, type FailureResult } from '@devicelab/shared';
import { RequestParams } from '../../src/http/params';
import { JsonBody, MAX_JSON_DEPTH, MAX_JSON_ITEMS, MAX_LENIENT_JSON_CHARS, TOO_DEEP, TOO_MANY_ITEMS } from '../../src/http/json-body';
import { serialize, toWire } from '../../src/http/respond';

const failureOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiFailure) return err.message;
    throw err;
  }
  throw new Error('expected an ApiFailure');
};
/** The failure Result an ApiFailure is written as: its text, code and parameter. */
const resultOf = (fn: () => unknown): FailureResult => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiFailure) return failure(err.message, err.code, err.parameter);
    throw err;
  }
  throw new Error('expected an ApiFailure');
};
const invalid = (message: string, parameter: string) => failure(message, 'INVALID_PARAMETER', parameter);

describe('RequestParams', () => {
  it('merges query and form body, names case-insensitive, + as space', () => {
    const p = RequestParams.fromUrlEncoded('Name=Pixel+3&pretty=true', 'action=Retain&ID=abc');
    expect(p.string('name')).toBe('Pixel 3');
    expect(p.string('id')).toBe('abc');
    expect(p.action()).toBe('retain');
    expect(p.pretty()).toBe(true);
  });

  it('treats an empty value as omitted but keeps the key for verbs', () => {
    const p = RequestParams.fromUrlEncoded('get=&properties=&force=&nativeAutomation=&slotNumber=');
    expect(p.verb()).toBe('get');
    expect(p.bool('properties')).toBeUndefined();
    expect(p.bool('force')).toBeUndefined();
    expect(p.int('slotNumber')).toBeUndefined();
    // Empty keys are omitted, so none of them is an unknown parameter either.
    expect(() => p.assertKnownKeys(new Set(), 'GET /Device')).not.toThrow();
  });

  it('names the first unknown key with a value, as the client spelled it; get, pretty and wait are known everywhere', () => {
    const p = RequestParams.fromUrlEncoded('get=&Pretty=true&WAIT=true&name=x', 'AnyIdd=7');
    expect(resultOf(() => p.assertKnownKeys(new Set(['name']), 'GET /Device')))
      .toEqual(failure("Unknown parameter 'AnyIdd' for GET /Device.", 'UNKNOWN_PARAMETER', 'AnyIdd'));
    expect(() => p.assertKnownKeys(new Set(['name', 'anyidd']), 'GET /Device')).not.toThrow();
    const long = RequestParams.fromUrlEncoded(`${'k'.repeat(5000)}=1`);
    expect(resultOf(() => long.assertKnownKeys(new Set(), 'GET /Device')))
      .toEqual(failure(`Unknown parameter '${'k'.repeat(100)}…' for GET /Device.`, 'UNKNOWN_PARAMETER', `${'k'.repeat(100)}…`));
  });

  it('recognises verbs without = and the legacy verb= form', () => {
    expect(RequestParams.fromUrlEncoded('add').verb()).toBe('add');
    expect(RequestParams.fromUrlEncoded('update&id=1').verb()).toBe('update');
    expect(RequestParams.fromUrlEncoded('verb=delete').verb()).toBe('delete');
    expect(RequestParams.fromUrlEncoded('id=1').verb()).toBeUndefined();
  });

  it('reads booleans in any case and rejects others with the .NET text', () => {
    const p = RequestParams.fromUrlEncoded('a=True&b=FALSE&c=yes');
    expect(p.bool('a')).toBe(true);
    expect(p.bool('b')).toBe(false);
    expect(resultOf(() => p.bool('c'))).toEqual(invalid('Value is not equivalent to either TrueString or FalseString.', 'c'));
  });

  it('reads Guids and enums with the vendor texts', () => {
    const p = RequestParams.fromUrlEncoded('id=nope&g={7C9E6679-7425-40DE-944B-E07FC1F90AE7}&s=online&u=sync&x=invalid');
    expect(resultOf(() => p.guid('id'))).toEqual(invalid('Invalid Guid format: nope', 'id'));
    expect(p.guid('g')).toBe('7c9e6679-7425-40de-944b-e07fc1f90ae7');
    expect(p.enum('s', ['Offline', 'Online'] as const)).toBe('Online');
    expect(p.enum('u', ['Off', 'Data'] as const, { sync: 'Data' })).toBe('Data');
    expect(resultOf(() => p.enum('x', ['Offline', 'Online'] as const))).toEqual(invalid("The requested value 'invalid' was not found.", 'x'));
  });

  it('wait is true only for a true-ish boolean', () => {
    expect(RequestParams.fromUrlEncoded('wait=true').wait()).toBe(true);
    expect(RequestParams.fromUrlEncoded('wait=True').wait()).toBe(true);
    expect(RequestParams.fromUrlEncoded('wait=5000').wait()).toBe(false);
    expect(RequestParams.fromUrlEncoded('wait=').wait()).toBe(false);
  });

  it('reads ints and dates', () => {
    const p = RequestParams.fromUrlEncoded('n=1777&bad=1.5&big=99999999999&d=3/24/2016+5:09:58+PM&e=nodate');
    expect(p.int('n')).toBe(1777);
    expect(resultOf(() => p.int('bad'))).toEqual(invalid('Input string was not in a correct format.', 'bad'));
    expect(resultOf(() => p.int('big'))).toEqual(invalid('Input string was not in a correct format.', 'big'));
    expect(p.date('d')?.date.getHours()).toBe(17);
    expect(resultOf(() => p.date('e'))).toEqual(invalid("String 'nodate' was not recognized as a valid DateTime.", 'e'));
  });

  it('an enum value named like an Object.prototype member is an unknown value, not a member', () => {
    const p = RequestParams.fromUrlEncoded('a=constructor&b=__proto__&c=toString&d=sync');
    for (const name of ['a', 'b', 'c']) {
      expect(resultOf(() => p.enum(name, ['Off', 'Data', 'Charge'], { sync: 'Data' })))
        .toEqual(invalid(`The requested value '${p.string(name)}' was not found.`, name));
    }
    expect(p.enum('d', ['Off', 'Data', 'Charge'], { sync: 'Data' })).toBe('Data');
  });

  it('reads dates of years 1 to 99 as written, and refuses dates outside the .NET range by name', () => {
    const p = RequestParams.fromUrlEncoded('a=0050-06-01&b=6/1/0050&c=0099-12-31T10:00:00&z=0000-01-01T00:00:00Z&Late=9999-12-31T23:59:59-23:59');
    expect(p.date('a')?.date.getFullYear()).toBe(50);
    expect(p.date('b')?.date.getFullYear()).toBe(50);
    expect(p.date('c')?.date.getFullYear()).toBe(99);
    const range = 'Dates from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z (UTC) are accepted.';
    expect(resultOf(() => p.date('z'))).toEqual(invalid(`Parameter 'z' is out of range: '0000-01-01T00:00:00Z'. ${range}`, 'z'));
    expect(resultOf(() => p.date('late')))
      .toEqual(invalid(`Parameter 'Late' is out of range: '9999-12-31T23:59:59-23:59'. ${range}`, 'Late'));
  });

  it('keeps the milliseconds of a 7-digit fraction without rolling into the next second', () => {
    const p = RequestParams.fromUrlEncoded('d=2026-11-22T10:00:59.9999999');
    expect(p.date('d')?.date.getSeconds()).toBe(59);
    expect(p.date('d')?.date.getMilliseconds()).toBe(999);
  });

  it('reads ints as .NET int.Parse does: leading zeros and a sign, nothing else', () => {
    const p = RequestParams.fromUrlEncoded('z=00000000001&neg=-0042&max=2147483647&min=-2147483648&over=2147483648&exp=1e3&hex=0x10');
    expect([p.int('z'), p.int('neg'), p.int('max'), p.int('min')]).toEqual([1, -42, 2147483647, -2147483648]);
    for (const name of ['over', 'exp', 'hex']) {
      expect(resultOf(() => p.int(name))).toEqual(invalid('Input string was not in a correct format.', name));
    }
  });

  it('refuses a NUL character when the value is used, naming the parameter as sent', () => {
    const p = RequestParams.fromUrlEncoded('Name=a%00b&other=fine');
    expect(p.string('other')).toBe('fine');
    expect(p.has('name')).toBe(true);
    expect(resultOf(() => p.string('name'))).toEqual(invalid("Parameter 'Name' must not contain a NUL character.", 'Name'));
  });

  it('does not throw on malformed percent escapes', () => {
    expect(RequestParams.fromUrlEncoded('name=%E0%A4%A&x=%').string('name')).toBeDefined();
  });
});

describe('JsonBody', () => {
  it('refuses a NUL character anywhere in the body, keys and nested values included', () => {
    for (const text of ['{"notes":"a\\u0000"}', '{"a\\u0000":1}', '{"p":[{"name":"x","value":["\\u0000"]}]}']) {
      expect(failureOf(() => JsonBody.parse(text))).toBe('Invalid JSON body: text must not contain a NUL character (\\u0000).');
    }
  });

  it('accepts unquoted keys, any key case and string values', () => {
    const body = JsonBody.parse('{displayName:"x", Enabled:"False", slotNumber:"1777", deleted: true}');
    expect(body.string('DISPLAYNAME')).toBe('x');
    expect(body.bool('enabled')).toBe(false);
    expect(body.int('SlotNumber')).toBe(1777);
    expect(body.bool('Deleted')).toBe(true);
  });

  it('refuses nesting deeper than the bound before parsing, whatever the size; brackets in strings and comments do not count', () => {
    const nested = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
    expect(JsonBody.parse(nested(MAX_JSON_DEPTH)).has('a')).toBe(true);
    expect(failureOf(() => JsonBody.parse(nested(MAX_JSON_DEPTH + 1)))).toBe(TOO_DEEP);
    expect(failureOf(() => JsonBody.parse(`{a:${'['.repeat(500_000)}${']'.repeat(500_000)}}`))).toBe(TOO_DEEP);
    expect(failureOf(() => JsonBody.parse(`{"a":1}${'['.repeat(MAX_JSON_DEPTH + 1)}`))).toBe(TOO_DEEP);
    const brackets = '[{'.repeat(100);
    expect(JsonBody.parse(`{"notes":"${brackets}", other:'${brackets}\\'' /* ${brackets} */ // ${brackets}\n}`).string('notes'))
      .toBe(brackets);
  });

  it('refuses more members and array elements than the bound before parsing; separators in strings do not count', () => {
    const members = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":1`).join(',')}}`;
    expect(JsonBody.parse(members(MAX_JSON_ITEMS / 2)).keys()).toHaveLength(MAX_JSON_ITEMS / 2);
    expect(failureOf(() => JsonBody.parse(members(100_000)))).toBe(TOO_MANY_ITEMS);
    expect(failureOf(() => JsonBody.parse(`{"roles":[${'1,'.repeat(MAX_JSON_ITEMS)}1]}`))).toBe(TOO_MANY_ITEMS);
    expect(JsonBody.parse(`{"notes":"${',:'.repeat(MAX_JSON_ITEMS)}"}`).string('notes')).toHaveLength(2 * MAX_JSON_ITEMS);
  });

  it('parses strict JSON of any accepted size; the lenient parser gets small bodies only', () => {
    const notes = 'n'.repeat(MAX_LENIENT_JSON_CHARS);
    expect(JsonBody.parse(`{"notes":"${notes}"}`).string('notes')).toBe(notes);
    expect(failureOf(() => JsonBody.parse(`{notes:"${notes}"}`)))
      .toMatch(/^Invalid JSON body: .*\. A body over 64 KiB must be strict JSON \(quoted keys\)\.$/);
    expect(JsonBody.parse(`{notes:'${'n'.repeat(1000)}'}`).string('notes')).toHaveLength(1000);
  });

  it('fails cleanly on malformed JSON and non-objects', () => {
    expect(failureOf(() => JsonBody.parse('{oops'))).toMatch(/^Invalid JSON body/);
    expect(failureOf(() => JsonBody.parse('[1]'))).toMatch(/^Invalid JSON body/);
    expect(failureOf(() => JsonBody.parse('{"enabled":"invalid"}').bool('enabled')))
      .toBe('Value is not equivalent to either TrueString or FalseString.');
  });
});

describe('response writer', () => {
  it('puts isSuccess first and omits nulls at every depth', () => {
    expect(serialize({ data: { a: null, b: [{ c: undefined, d: 1 }] }, isSuccess: true }, false))
      .toBe('{"isSuccess":true,"data":{"b":[{"d":1}]}}');
    expect(serialize({ errorMessage: 'x', isSuccess: false }, false)).toBe('{"isSuccess":false,"errorMessage":"x"}');
  });

  it('is compact by default and indents with pretty', () => {
    expect(serialize({ isSuccess: true }, false)).toBe('{"isSuccess":true}');
    expect(serialize({ isSuccess: false, errorMessage: 'm' }, true))
      .toBe('{\n  "isSuccess": false,\n  "errorMessage": "m"\n}');
  });

  it('formats dates as UTC without fractions', () => {
    expect(toWire({ at: new Date('2024-01-02T03:04:05.678Z') })).toEqual({ at: '2024-01-02T03:04:05Z' });
  });
});
