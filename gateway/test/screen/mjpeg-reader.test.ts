/**
 * The MJPEG part reader: WebDriverAgent's stream as FBMjpegServer writes it (boundary `--BoundaryString` in the
 * Content-Type and as the delimiter line, Content-Length, `\r\n\r\n` after each JPEG), an RFC 2046 stream whose
 * parts have no length, in any chunking; and the bounds that refuse a hostile or broken stream.
 */
import { MjpegReader, MjpegStreamError, multipartBoundary } from '../../src/screen/mjpeg-reader';

const jpeg = (n: number, size = 300): Buffer => {
  const body = Buffer.alloc(size, n);
  body[0] = 0xff;
  body[1] = 0xd8;
  // A JPEG may carry the delimiter's bytes without its line break; they are not a delimiter.
  body.write('--BoundaryString', 10, 'latin1');
  return body;
};

/** What FBMjpegServer sends after its HTTP head, part by part. */
const wdaPart = (image: Buffer) => Buffer.concat([
  Buffer.from(`--BoundaryString\r\nContent-type: image/jpeg\r\nContent-Length: ${image.length}\r\n\r\n`, 'latin1'), image, Buffer.from('\r\n\r\n'),
]);

function read(boundary: string, stream: Buffer, chunk: number, maxPartBytes = 1 << 20): Buffer[] {
  const parts: Buffer[] = [];
  const reader = new MjpegReader(boundary, { maxPartBytes, maxHeaderBytes: 1024 }, (p) => parts.push(p));
  for (let at = 0; at < stream.length; at += chunk) reader.push(stream.subarray(at, at + chunk));
  return parts;
}

test('the boundary of a multipart Content-Type, quoted or not', () => {
  expect(multipartBoundary('multipart/x-mixed-replace; boundary=--BoundaryString')).toBe('--BoundaryString');
  expect(multipartBoundary('multipart/x-mixed-replace;boundary="frame boundary"; charset=x')).toBe('frame boundary');
  expect(multipartBoundary('image/jpeg')).toBeUndefined();
  expect(multipartBoundary('multipart/x-mixed-replace')).toBeUndefined();
  expect(multipartBoundary(undefined)).toBeUndefined();
});

test.each([1, 7, 64, 100_000])('WebDriverAgent\'s stream in chunks of %i bytes gives each JPEG whole', (chunk) => {
  const images = [jpeg(1), jpeg(2, 5_000), jpeg(3)];
  const parts = read('--BoundaryString', Buffer.concat(images.map(wdaPart)), chunk);
  expect(parts).toEqual(images);
});

test('an RFC 2046 stream whose parts give no length: each body runs to the next delimiter', () => {
  const images = [jpeg(4), jpeg(5)];
  const stream = Buffer.concat([
    Buffer.from('preamble\r\n'),
    ...images.flatMap((image) => [Buffer.from('--frame\r\nContent-Type: image/jpeg\r\n\r\n'), image, Buffer.from('\r\n')]),
    Buffer.from('--frame\r\n'),
  ]);
  expect(read('frame', stream, 13)).toEqual(images);
});

test('a closing delimiter ends the stream', () => {
  const reader = new MjpegReader('frame', { maxPartBytes: 1000 }, () => undefined);
  expect(() => reader.push(Buffer.from('--frame--\r\n'))).toThrow(/ended/);
});

test.each([
  ['a Content-Length over the part limit', `--BoundaryString\r\nContent-Length: 2000\r\n\r\n`, /over 1000/],
  ['a Content-Length that is not a number', `--BoundaryString\r\nContent-Length: -5\r\n\r\n`, /Content-Length/],
  ['a part without length that runs past the limit', `--BoundaryString\r\n\r\n${'x'.repeat(1100)}`, /over 1000/],
  ['bytes that never reach a delimiter', 'y'.repeat(1200), /delimiter/],
  ['a header block that never ends', `--BoundaryString\r\nX-A: ${'z'.repeat(1100)}`, /header block/],
])('refused: %s', (_what, stream, message) => {
  const reader = new MjpegReader('--BoundaryString', { maxPartBytes: 1000, maxHeaderBytes: 1024 }, () => undefined);
  let error: unknown;
  try {
    reader.push(Buffer.from(stream, 'latin1'));
  } catch (err) {
    error = err;
  }
  expect(error).toBeInstanceOf(MjpegStreamError);
  expect(String((error as Error).message)).toMatch(message);
  // A broken stream stays refused.
  expect(() => reader.push(wdaPart(jpeg(1)))).toThrow(MjpegStreamError);
});
