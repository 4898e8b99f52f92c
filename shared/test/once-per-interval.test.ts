import { OncePerInterval } from '../src/once-per-interval';

test('a key is told once per interval, and no more keys are kept than the bound', () => {
  let now = 0;
  const once = new OncePerInterval(60_000, 2, () => now);
  expect(once.first('a')).toBe(true);
  expect(once.first('a')).toBe(false);
  now = 59_999;
  expect(once.first('a')).toBe(false);
  now = 60_000;
  expect(once.first('a')).toBe(true);
  expect(once.first('b')).toBe(true);
  expect(once.first('c')).toBe(true); // over the bound: 'a', the least recently told, is forgotten
  expect(once.first('a')).toBe(true);
  expect(once.first('c')).toBe(false);
});
