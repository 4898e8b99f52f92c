/** The per-device Appium log: lines as Appium writes them with --log-format json, bounded by bytes, picked by context. */
import { AppiumLog } from '../../src/automation/appium-log';

const line = (message: string, context?: { sessionId?: string; requestId?: string }) =>
  JSON.stringify({ ...(context ? { context: { isSensitive: false, ...context } } : {}), level: 'info', message, timestamp: '2026-11-28 00:00:00:000' });

test('a session\'s lines, its create request\'s lines, or both; other sessions\' lines stay out', () => {
  const log = new AppiumLog(1024 * 1024);
  log.add(line('[Appium] Welcome to Appium v3.8.0'));
  log.add(line('[HTTP] --> POST /session', { requestId: 'create-1' }));
  log.add(line('[UiAutomator2] starting', { requestId: 'create-1' }));
  log.add(line('[HTTP] <-- POST /session 200', { requestId: 'create-1', sessionId: 's-1' }));
  log.add(line('[HTTP] --> GET /session/s-1/source', { requestId: 'r-2', sessionId: 's-1' }));
  log.add(line('[HTTP] --> GET /session/s-2/source', { requestId: 'r-3', sessionId: 's-2' }));
  const messages = (text: string) => text.trim().split('\n').map((l) => JSON.parse(l).message);
  expect(messages(log.read())).toHaveLength(6);
  expect(messages(log.read({ sessionId: 's-1' }))).toEqual(['[HTTP] <-- POST /session 200', '[HTTP] --> GET /session/s-1/source']);
  expect(messages(log.read({ requestId: 'create-1' }))).toEqual(['[HTTP] --> POST /session', '[UiAutomator2] starting', '[HTTP] <-- POST /session 200']);
  expect(messages(log.read({ sessionId: 's-1', requestId: 'create-1' }))).toEqual([
    '[HTTP] --> POST /session', '[UiAutomator2] starting', '[HTTP] <-- POST /session 200', '[HTTP] --> GET /session/s-1/source',
  ]);
  expect(log.read({ sessionId: 'nope' })).toBe('');
});

test('the oldest lines go once the byte budget is spent; every kept line reads as JSON', () => {
  const log = new AppiumLog(10_000);
  log.add('dbug Appium Creating hash file directory');
  for (let i = 0; i < 1000; i++) log.add(line(`line ${i}`, { sessionId: 's' }));
  expect(log.sizeBytes).toBeLessThanOrEqual(10_000);
  const kept = log.read().trim().split('\n').map((l) => JSON.parse(l));
  expect(kept[kept.length - 1].message).toBe('line 999');
  expect(kept.some((l) => l.message === 'line 0')).toBe(false);
  expect(kept.some((l) => /Creating hash/.test(l.message))).toBe(false);
  const fresh = new AppiumLog(10_000);
  fresh.add('dbug Appium Creating hash file directory');
  expect(JSON.parse(fresh.read())).toEqual({ level: 'info', message: 'dbug Appium Creating hash file directory' });
  fresh.add(line('x'.repeat(200_000)));
  expect(fresh.sizeBytes).toBeLessThanOrEqual(10_000);
});
