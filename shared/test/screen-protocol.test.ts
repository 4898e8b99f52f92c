import { encodeScreenControl, encodeScreenFrame, isScreenFrame, MAX_SCREEN_INPUT_BYTES, parseScreenInput } from '../src/screen-protocol';

const control = (value: unknown) => Buffer.concat([Buffer.from([1]), Buffer.from(JSON.stringify(value))]);

test('viewer input is read field by field; anything else is dropped', () => {
  expect(parseScreenInput(control({ t: 'touch', a: 'd', x: 0.5, y: 1 }))).toEqual({ t: 'touch', a: 'd', x: 0.5, y: 1, c: 0 });
  expect(parseScreenInput(control({ t: 'key', key: 'home' }))).toEqual({ t: 'key', key: 'home' });
  expect(parseScreenInput(control({ t: 'text', text: 'Grüße 日本' }))).toEqual({ t: 'text', text: 'Grüße 日本' });
  expect(parseScreenInput(control({ t: 'rotate', rotation: 90 }))).toEqual({ t: 'rotate', rotation: 90 });
  for (const bad of [
    { t: 'touch', a: 'd', x: 1.5, y: 0 }, { t: 'touch', a: 'x', x: 0, y: 0 }, { t: 'touch', a: 'd', x: 0, y: 0, c: 11 },
    { t: 'key', key: 'reboot' }, { t: 'text', text: '' }, { t: 'text', text: 'a'.repeat(1001) }, { t: 'rotate', rotation: 45 },
    { t: 'shell', command: 'rm -rf /' }, [1, 2], 'text',
  ]) expect(parseScreenInput(control(bad))).toBeUndefined();
  expect(parseScreenInput(Buffer.from([1, 0x7b]))).toBeUndefined(); // not JSON
  expect(parseScreenInput(encodeScreenFrame(Buffer.from([0xff, 0xd8])))).toBeUndefined();
  expect(parseScreenInput(control({ t: 'text', text: 'a'.repeat(MAX_SCREEN_INPUT_BYTES) }))).toBeUndefined();
});

test('frames and control messages are told apart by their first byte', () => {
  expect(isScreenFrame(encodeScreenFrame(Buffer.from('jpeg')))).toBe(true);
  expect(isScreenFrame(encodeScreenControl({ t: 'pong' }))).toBe(false);
});
