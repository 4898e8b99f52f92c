/**
 * The MJPEG reader on the bytes the UiAutomator2 server and WebDriverAgent write (their head, `--BoundaryString`
 * parts with Content-Length and the `\r\n\r\n` after each), an RFC 2046 stream without lengths, any split of the
 * bytes into chunks, and the bounds: a stream that breaks one is refused at once, not buffered.
 */
import { boundaryOf, type MjpegLimits, MjpegResponseReader } from '../../src/screen/mjpeg-reader';

const jpeg = (fill: number, size: number): Buffer => {
  const bytes = Buffer.alloc(size, fill);
  bytes[0] = 0xff; bytes[1] = 0xd8; bytes[size - 2] = 0xff; bytes[size - 1] = 0xd9;
  return bytes;
};

/** What the UiAutomator2 server's MjpegScreenshotStream writes (WDA's differs only in its Server header). */
function serverStream(frames: Buffer[]): Buffer {
  const head = 'HTTP/1.0 200 OK\r\nServer: AQI Android Screenshot Socket Server\r\nConnection: close\r\nMax-Age: 0\r\nExpires: 0\r\n'
    + 'Cache-Control: no-cache, private\r\nPragma: no-cache\r\nContent-Type: multipart/x-mixed-replace; boundary=--BoundaryString\r\n\r\n';
  return Buffer.concat([Buffer.from(head), ...frames.flatMap((f) => [
    Buffer.from(`--BoundaryString\r\nContent-type: image/jpg\r\nContent-Length: ${f.length}\r\n\r\n`), f, Buffer.from('\r\n\r\n'),
  ])]);
}

function read(chunks: Buffer[], limits?: MjpegLimits): { frames: Buffer[]; invalid?: string; closed: boolean } {
  const out: { frames: Buffer[]; invalid?: string; closed: boolean } = { frames: [], closed: false };
  const reader = new MjpegResponseReader({
    frame: (f) => out.frames.push(f),
    invalid: (reason) => { out.invalid = reason; },
    closed: () => { out.closed = true; },
  }, limits);
  for (const chunk of chunks) reader.push(chunk);
  return out;
}

const splitEvery = (bytes: Buffer, size: number): Buffer[] => {
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return chunks;
};

test('the frames of the servers\' stream come out whole, whatever the chunks', () => {
  const frames = [jpeg(1, 300), jpeg(2, 5_000), jpeg(3, 40)];
  const stream = serverStream(frames);
  for (const size of [1, 2, 7, 64, 1_000, stream.length]) {
    const out = read(splitEvery(stream, size));
    expect(out.invalid).toBeUndefined();
    expect(out.frames).toEqual(frames);
  }
});

test('an RFC 2046 stream with a quoted boundary, no part lengths and a close delimiter', () => {
  const frames = [jpeg(4, 100), jpeg(5, 2_000)];
  const stream = Buffer.concat([
    Buffer.from('HTTP/1.1 200 OK\nContent-Type: multipart/x-mixed-replace;boundary="frame"\n\npreamble\r\n'),
    ...frames.flatMap((f) => [Buffer.from('--frame\r\nContent-Type: image/jpeg\r\n\r\n'), f, Buffer.from('\r\n')]),
    Buffer.from('--frame--\r\n'),
  ]);
  for (const size of [1, 13, stream.length]) {
    const out = read(splitEvery(stream, size));
    expect(out.invalid).toBeUndefined();
    expect(out.frames).toEqual(frames);
    expect(out.closed).toBe(true);
  }
});

test('boundaries as servers declare them', () => {
  expect(boundaryOf('multipart/x-mixed-replace; boundary=--BoundaryString')).toBe('--BoundaryString');
  expect(boundaryOf('Multipart/X-Mixed-Replace;boundary="a b"; charset=x')).toBe('a b');
  expect(boundaryOf('image/jpeg; boundary=x')).toBeUndefined();
  expect(boundaryOf('multipart/x-mixed-replace')).toBeUndefined();
});

test('what is not an MJPEG stream is refused with the reason', () => {
  expect(read([Buffer.from('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n')]).invalid).toBe('HTTP status 404');
  expect(read([Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html>')]).invalid).toMatch(/content type/);
  expect(read([Buffer.from('SSH-2.0-OpenSSH\r\n\r\n')]).invalid).toBe('an answer that is not HTTP');
  expect(read([Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: multipart/x-mixed-replace; boundary=b\r\n\r\n')]).invalid)
    .toBe('a chunked stream');
  const png = Buffer.from('89504e470d0a1a0a0000', 'hex');
  expect(read([serverStream([png])]).invalid).toBe('a part that is not a JPEG');
});

test('the bounds: a long head, a huge part length, a part without end, garbage instead of a delimiter', () => {
  const limits = { maxHeadBytes: 1_024, maxPartBytes: 10_000 };
  expect(read([Buffer.from(`HTTP/1.1 200 OK\r\nX: ${'a'.repeat(2_000)}`)], limits).invalid).toBe('a response head beyond the bound');
  const head = 'HTTP/1.1 200 OK\r\nContent-Type: multipart/x-mixed-replace; boundary=b\r\n\r\n';
  expect(read([Buffer.from(`${head}--b\r\nContent-Length: 10001\r\n\r\n`)], limits).invalid).toBe('a part of 10001 bytes');
  expect(read([Buffer.from(`${head}--b\r\nContent-Length: 99999999999\r\n\r\n`)], limits).invalid).toBe('a part of 99999999999 bytes');
  const endless = read([Buffer.from(`${head}--b\r\n\r\n`), jpeg(6, 9_000), jpeg(6, 9_000)], limits);
  expect(endless.invalid).toBe('a part beyond the bound');
  expect(read([Buffer.from(head), Buffer.alloc(3_000, 0x41)], limits).invalid).toBe('no part delimiter where one was due');
  expect(read([Buffer.from(`${head}--b\r\n${'X-A: b\r\n'.repeat(300)}`)], limits).invalid).toBe('part headers beyond the bound');
  // Nothing arrives after a failure.
  const out = read([Buffer.from(`${head}--b\r\nContent-Length: 10001\r\n\r\n`), serverStream([jpeg(7, 100)])], limits);
  expect(out.frames).toHaveLength(0);
});
