/**
 * Reads an MJPEG stream (HTTP `multipart/x-mixed-replace` of JPEG parts), as the UiAutomator2 server (device port
 * 7810) and WebDriverAgent (9100) serve it, from the raw bytes of the connection: the response head, then parts.
 *
 * Both servers declare `boundary=--BoundaryString` and start each part with `--BoundaryString` itself, where
 * RFC 2046 would put `--` before the declared boundary: either delimiter is accepted. A part's `Content-Length` is
 * used when given (both servers give it); without one the part runs to the next delimiter. Everything is bounded:
 * the response head and a part's headers (`maxHeadBytes`), a part's body (`maxPartBytes`); beyond a bound, or a part
 * that is not a JPEG, the stream counts as broken (`invalid`) instead of being buffered.
 */

export interface MjpegLimits {
  /** Largest JPEG part; default 16 MiB (a phone's full-size frame is well under 2 MiB). */
  maxPartBytes?: number;
  /** Largest response head, part header block or bytes skipped before a delimiter; default 16 KiB. */
  maxHeadBytes?: number;
}

export interface MjpegListener {
  /** One whole JPEG (its own copy). */
  frame(jpeg: Buffer): void;
  /** The stream is not MJPEG or broke a bound; nothing more is read. */
  invalid(reason: string): void;
  /** The server closed the multipart body (`--boundary--`). */
  closed?(): void;
}

const DEFAULT_MAX_PART = 16 * 1024 * 1024;
const DEFAULT_MAX_HEAD = 16 * 1024;

/** The boundary of a `multipart/...; boundary=...` content type (quoted or not), or undefined. */
export function boundaryOf(contentType: string): string | undefined {
  if (!/^\s*multipart\//i.test(contentType)) return undefined;
  const match = /;\s*boundary\s*=\s*(?:"([^"]{1,200})"|([^\s;"]{1,200}))/i.exec(contentType);
  return match?.[1] ?? match?.[2];
}

/** The request an MJPEG server answers with its stream (both servers read only its first line). */
export function mjpegRequest(host: string, path = '/'): string {
  return `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nAccept: multipart/x-mixed-replace\r\nConnection: close\r\n\r\n`;
}

/** Bytes received and not yet consumed, kept as the chunks that came (concatenated only when needed). */
class Pending {
  private chunks: Buffer[] = [];
  size = 0;

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.size += chunk.length;
  }

  /** All pending bytes as one buffer (kept as the single chunk afterwards). */
  all(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks, this.size)];
    return this.chunks[0] ?? Buffer.alloc(0);
  }

  /** Removes and returns the first `n` bytes (a copy, so the rest of a large chunk is not held by it). */
  take(n: number): Buffer {
    // Copied straight from the chunks (one copy, not a join and then a copy); whole chunks leave the list.
    const taken = Buffer.allocUnsafe(n);
    let filled = 0;
    while (filled < n) {
      const chunk = this.chunks[0];
      const wanted = n - filled;
      if (chunk.length <= wanted) {
        chunk.copy(taken, filled);
        filled += chunk.length;
        this.chunks.shift();
      } else {
        chunk.copy(taken, filled, 0, wanted);
        filled = n;
        this.chunks[0] = chunk.subarray(wanted);
      }
    }
    this.size -= n;
    return taken;
  }

  drop(n: number): void {
    const whole = this.all();
    const rest = whole.subarray(n);
    this.chunks = rest.length ? [rest] : [];
    this.size = rest.length;
  }

  clear(): void {
    this.chunks = [];
    this.size = 0;
  }
}

/** Index just past the first blank line (CRLF CRLF or LF LF), or -1. */
function headEnd(bytes: Buffer): number {
  const crlf = bytes.indexOf('\r\n\r\n');
  const lf = bytes.indexOf('\n\n');
  if (crlf < 0 && lf < 0) return -1;
  if (crlf < 0) return lf + 2;
  if (lf < 0) return crlf + 4;
  return Math.min(crlf + 4, lf + 2);
}

function headerLines(head: string): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of head.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return headers;
}

type PartState = { t: 'delimiter' } | { t: 'headers' } | { t: 'body'; length?: number; scanFrom: number };

/** The parts of a multipart body with a known boundary (the HTTP head already read). */
class MultipartJpegReader {
  private readonly pending = new Pending();
  private readonly boundary: Buffer;
  private readonly maxPart: number;
  private readonly maxHead: number;
  private state: PartState = { t: 'delimiter' };
  private done = false;

  constructor(boundary: string, private readonly listener: MjpegListener, limits: MjpegLimits = {}) {
    this.boundary = Buffer.from(boundary, 'latin1');
    this.maxPart = limits.maxPartBytes ?? DEFAULT_MAX_PART;
    this.maxHead = limits.maxHeadBytes ?? DEFAULT_MAX_HEAD;
  }

  push(chunk: Buffer): void {
    if (this.done) return;
    this.pending.push(chunk);
    while (!this.done && this.step());
  }

  /** Consumes what the current state can; false when it needs more bytes. */
  private step(): boolean {
    switch (this.state.t) {
      case 'delimiter': return this.readDelimiter();
      case 'headers': return this.readHeaders();
      default: return this.readBody(this.state);
    }
  }

  private readDelimiter(): boolean {
    const bytes = this.pending.all();
    const at = bytes.indexOf(this.boundary);
    if (at < 0) {
      if (bytes.length > this.maxHead + this.boundary.length) this.fail('no part delimiter where one was due');
      return false;
    }
    const lineEnd = bytes.indexOf('\n', at + this.boundary.length);
    if (lineEnd < 0) {
      if (bytes.length - at > this.maxHead) this.fail('a delimiter line without end');
      return false;
    }
    if (at > this.maxHead) return this.fail(`${at} bytes before a part delimiter`);
    const tail = bytes.subarray(at + this.boundary.length, lineEnd).toString('latin1').trim();
    this.pending.drop(lineEnd + 1);
    if (tail === '--') {
      this.done = true;
      this.pending.clear();
      this.listener.closed?.();
      return false;
    }
    if (tail !== '') return this.fail('a malformed part delimiter');
    this.state = { t: 'headers' };
    return true;
  }

  private readHeaders(): boolean {
    const bytes = this.pending.all();
    // A part with no headers at all starts with its blank line.
    const blank = bytes[0] === 0x0a ? 1 : bytes[0] === 0x0d && bytes[1] === 0x0a ? 2 : 0;
    const end = blank || headEnd(bytes.subarray(0, this.maxHead + 4));
    if (end < 0) {
      if (bytes.length > this.maxHead) this.fail('part headers beyond the bound');
      return false;
    }
    const headers = headerLines(bytes.subarray(0, end).toString('latin1'));
    this.pending.drop(end);
    const lengthText = headers.get('content-length');
    if (lengthText === undefined) {
      this.state = { t: 'body', scanFrom: 0 };
      return true;
    }
    const length = /^\d{1,10}$/.test(lengthText) ? Number(lengthText) : NaN;
    if (!Number.isFinite(length) || length === 0 || length > this.maxPart) return this.fail(`a part of ${lengthText} bytes`);
    this.state = { t: 'body', length, scanFrom: 0 };
    return true;
  }

  private readBody(state: { length?: number; scanFrom: number }): boolean {
    if (state.length !== undefined) {
      if (this.pending.size < state.length) return false;
      this.emit(this.pending.take(state.length));
      return true;
    }
    const bytes = this.pending.all();
    const at = bytes.indexOf(this.boundary, state.scanFrom);
    if (at < 0) {
      if (bytes.length > this.maxPart + this.maxHead) return this.fail('a part beyond the bound');
      state.scanFrom = Math.max(0, bytes.length - this.boundary.length - 2);
      return false;
    }
    // The delimiter line starts at the boundary, or at the `--` before it; the line break before it is not the part's.
    let end = at >= 2 && bytes[at - 1] === 0x2d && bytes[at - 2] === 0x2d ? at - 2 : at;
    if (end >= 1 && bytes[end - 1] === 0x0a) end--;
    if (end >= 1 && bytes[end - 1] === 0x0d) end--;
    if (end > this.maxPart) return this.fail('a part beyond the bound');
    const jpeg = this.pending.take(end);
    this.emit(jpeg);
    return true;
  }

  private emit(jpeg: Buffer): void {
    this.state = { t: 'delimiter' };
    if (jpeg.length < 4 || jpeg[0] !== 0xff || jpeg[1] !== 0xd8) {
      this.fail('a part that is not a JPEG');
      return;
    }
    this.listener.frame(jpeg);
  }

  private fail(reason: string): false {
    this.done = true;
    this.pending.clear();
    this.listener.invalid(reason);
    return false;
  }
}

/**
 * A whole MJPEG response as read from its connection: the status line and headers (200, a multipart content type
 * with a boundary, no chunked transfer coding: the servers send none), then the parts.
 */
export class MjpegResponseReader {
  private readonly head = new Pending();
  private parts: MultipartJpegReader | undefined;
  private failed = false;

  constructor(private readonly listener: MjpegListener, private readonly limits: MjpegLimits = {}) {}

  push(chunk: Buffer): void {
    if (this.failed) return;
    if (this.parts) return this.parts.push(chunk);
    this.head.push(chunk);
    const bytes = this.head.all();
    const maxHead = this.limits.maxHeadBytes ?? DEFAULT_MAX_HEAD;
    const end = headEnd(bytes.subarray(0, maxHead + 4));
    if (end < 0) {
      if (bytes.length > maxHead) this.fail('a response head beyond the bound');
      return;
    }
    const text = bytes.subarray(0, end).toString('latin1');
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(text);
    if (!status) return this.fail('an answer that is not HTTP');
    if (status[1] !== '200') return this.fail(`HTTP status ${status[1]}`);
    const headers = headerLines(text.slice(text.indexOf('\n') + 1));
    if (/chunked/i.test(headers.get('transfer-encoding') ?? '')) return this.fail('a chunked stream');
    const boundary = boundaryOf(headers.get('content-type') ?? '');
    if (!boundary) return this.fail(`content type ${JSON.stringify((headers.get('content-type') ?? '').slice(0, 80))}`);
    const rest = bytes.subarray(end);
    this.head.clear();
    this.parts = new MultipartJpegReader(boundary, this.listener, this.limits);
    this.parts.push(rest);
  }

  private fail(reason: string): void {
    this.failed = true;
    this.head.clear();
    this.listener.invalid(reason);
  }
}
