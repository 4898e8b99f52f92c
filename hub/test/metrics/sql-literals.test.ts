/**
 * The literals of the metrics statements (sent in the simple protocol, without bound parameters): exact SQL for
 * values of the expected shape, refusal for anything else, so a wrong value can never become SQL text.
 */
import { Kysely, PostgresAdapter, DummyDriver, PostgresIntrospector, PostgresQueryCompiler, type RawBuilder } from 'kysely';
import { countLiteral, float8Literal, hexTextLiteral, timestampLiteral, uuidLiteral } from '../../src/metrics/sql-literals';

const compiler = new Kysely<Record<string, never>>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});
const text = (literal: RawBuilder<unknown>) => {
  const compiled = literal.compile(compiler);
  expect(compiled.parameters).toEqual([]);
  return compiled.sql;
};

describe('metrics SQL literals', () => {
  it('render values of the expected shape', () => {
    expect(text(uuidLiteral('f7bf6e0e-e3e1-41d4-aadf-10f71933f934'))).toBe("'f7bf6e0e-e3e1-41d4-aadf-10f71933f934'::uuid");
    expect(text(timestampLiteral(new Date('2026-11-22T10:00:00.250Z')))).toBe("'2026-11-22T10:00:00.250Z'::timestamptz");
    expect(text(float8Literal(0.95))).toBe('0.95::float8');
    // Past 9999 JavaScript writes `+010000-...`, which PostgreSQL reads as a time zone: plain digits instead.
    expect(text(timestampLiteral(new Date('+010000-01-01T04:59:59.999Z')))).toBe("'10000-01-01T04:59:59.999Z'::timestamptz");
    expect(text(timestampLiteral(new Date('0001-01-01T00:00:00.000Z')))).toBe("'0001-01-01T00:00:00.000Z'::timestamptz");
    expect(text(countLiteral(120000))).toBe('120000');
  });

  it('render request text as the hex digits of its UTF-8 only; text with NUL is refused', () => {
    expect(text(hexTextLiteral("it's"))).toBe("convert_from(decode('69742773', 'hex'), 'UTF8')");
    expect(text(hexTextLiteral("'; DROP TABLE devices; --"))).toMatch(/^convert_from\(decode\('[0-9a-f]+', 'hex'\), 'UTF8'\)$/);
    expect(() => hexTextLiteral('a\0b')).toThrow();
  });

  it.each([
    ['a uuid with a quote', () => uuidLiteral("f7bf6e0e-e3e1-41d4-aadf-10f71933f93'")],
    ['SQL as a uuid', () => uuidLiteral("'; DROP TABLE devices; --")],
    ['an invalid date', () => timestampLiteral(new Date('no date'))],
    ['the year 0 (PostgreSQL has none)', () => timestampLiteral(new Date('0000-06-01T00:00:00Z'))],
    ['a year before 0', () => timestampLiteral(new Date('-000001-06-01T00:00:00Z'))],
    ['NaN', () => float8Literal(Number.NaN)],
    ['Infinity', () => float8Literal(Number.POSITIVE_INFINITY)],
    ['a negative count', () => countLiteral(-1)],
    ['a fractional count', () => countLiteral(1.5)],
    ['a count as text', () => countLiteral('1; DROP TABLE devices' as unknown as number)],
  ])('refuse %s', (_what, render) => {
    expect(render).toThrow();
  });
});
