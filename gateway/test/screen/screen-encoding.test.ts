import { encodeModifiedUtf7 } from '../../src/drivers/android/screen/keys-and-text';
import { MinicapStreamReader, projection, type MinicapBanner } from '../../src/drivers/android/screen/minicap-stream';
import { parseMinitouchGreeting, uprightPoint } from '../../src/drivers/android/screen/minitouch';

test('text for the Unicode IME is IMAP modified UTF-7 (RFC 3501 5.1.3)', () => {
  expect(encodeModifiedUtf7('~peter/mail/台北/日本語')).toBe('~peter/mail/&U,BTFw-/&ZeVnLIqe-');
  expect(encodeModifiedUtf7('Tom & Jerry')).toBe('Tom &- Jerry');
  expect(encodeModifiedUtf7('Grüße')).toBe('Gr&APwA3w-e');
});

test('the minicap stream is read as a banner and whole JPEG frames, however the bytes are cut', () => {
  const banner = Buffer.alloc(24);
  banner[0] = 1; banner[1] = 24; banner.writeUInt32LE(4242, 2); banner.writeUInt32LE(1080, 6); banner.writeUInt32LE(1920, 10);
  banner.writeUInt32LE(540, 14); banner.writeUInt32LE(960, 18); banner[22] = 1; banner[23] = 2;
  const frame = (n: number) => {
    const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8]), Buffer.alloc(n, 7)]);
    const length = Buffer.alloc(4);
    length.writeUInt32LE(jpeg.length, 0);
    return Buffer.concat([length, jpeg]);
  };
  const stream = Buffer.concat([banner, frame(10), frame(3000), frame(1)]);
  const seen: { banner?: MinicapBanner; frames: number[]; invalid?: string } = { frames: [] };
  const reader = new MinicapStreamReader({
    banner: (b) => { seen.banner = b; }, frame: (f) => seen.frames.push(f.length), invalid: (r) => { seen.invalid = r; },
  });
  for (let i = 0; i < stream.length; i += 7) reader.push(stream.subarray(i, i + 7));
  expect(seen.banner).toEqual({ version: 1, pid: 4242, realWidth: 1080, realHeight: 1920, virtualWidth: 540, virtualHeight: 960, orientation: 90, quirks: 2 });
  expect(seen.frames).toEqual([12, 3002, 3]);
  expect(seen.invalid).toBeUndefined();
  const broken = new MinicapStreamReader({ banner: () => undefined, frame: () => undefined, invalid: (r) => { seen.invalid = r; } });
  const huge = Buffer.alloc(4);
  huge.writeUInt32LE(0xffffffff, 0);
  broken.push(Buffer.concat([banner, huge]));
  expect(seen.invalid).toMatch(/frame of/);
});

test('projection fits the long edge; minitouch points are turned back to the panel', () => {
  expect(projection(1080, 1920, 0, 960)).toBe('1080x1920@540x960/0');
  expect(projection(720, 1280, 90, 1280)).toBe('720x1280@720x1280/90');
  expect(parseMinitouchGreeting('v 1\n^ 10 4095 4095 255\n$ 77\n')).toEqual({ maxContacts: 10, maxX: 4095, maxY: 4095, maxPressure: 255, pid: 77 });
  expect(parseMinitouchGreeting('v 1\n^ 10 4095 4095 255\n')).toBeUndefined();
  expect(uprightPoint(0.25, 0.75, 0)).toEqual({ x: 0.25, y: 0.75 });
  expect(uprightPoint(0, 0, 90)).toEqual({ x: 1, y: 0 });
  expect(uprightPoint(0.25, 0.75, 180)).toEqual({ x: 0.75, y: 0.25 });
  expect(uprightPoint(0, 0, 270)).toEqual({ x: 0, y: 1 });
});
