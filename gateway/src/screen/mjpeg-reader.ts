/**
 * The parts of an MJPEG stream (`multipart/x-mixed-replace`, as WebDriverAgent and the UiAutomator2 server send
 * their screen): each part's body is one JPEG. The boundary comes from the response's Content-Type. Both servers
 * name it `--BoundaryString` and start each part with that same line rather than with `--` and the boundary as
 * RFC 2046 has it; a delimiter line of either form is accepted. A part's Content-Length, where given, is trusted;
 * otherwise the body runs to the next delimiter. Everything is bounded: the bytes before a delimiter, a part's
 * header block and its body; a stream that breaks a bound or its syntax is refused with an MjpegStreamError.
 */

export class MjpegStreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MjpegStreamError';
  }
}

export interface MjpegReaderOptions {
  /** The largest part body (one frame) accepted. */
  maxPartBytes: number;
  /** The largest header block of a part, and the most bytes skipped looking for a delimiter; default 8 KiB. */
  maxHeaderBytes?: number;
}

/** The boundary a `multipart/*` Content-Type names (quoted or not), or undefined for anything else. */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  if (!contentType || !/^\s*multipart\//i.test(contentType)) return undefined;
  const match = /;\s*boundary\s*=\s*(?:"([^"]{1,200})"|([^\s;]{1,200}))/i.exec(contentType);
  return match ? (match[1] ?? match[2]) : undefined;
}

type State = { at: 'delimiter' } | { at: 'headers' } | { at: 'body'; length?: number };

export class MjpegReader {
  /** The shortest form of the delimiter line; the RFC's (`--` + boundary) contains it when the boundary starts with `--`. */
  private readonly delimiter: Buffer;
  private readonly bodyEnd: Buffer;
  private readonly maxHeaderBytes: number;
  /** Bytes received and not yet consumed, joined only when a step needs them contiguous (a body waits unjoined). */
  private chunks: Buffer[] = [];
  private size = 0;
  private state: State = { at: 'delimiter' };
  private failed: MjpegStreamError | undefined;
  /** Parts read so far. */
  parts = 0;

  constructor(boundary: string, private readonly options: MjpegReaderOptions, private readonly onPart: (body: Buffer) => void) {
    if (!boundary) throw new MjpegStreamError('The stream names no multipart boundary');
    this.delimiter = Buffer.from(boundary.startsWith('--') ? boundary : `--${boundary}`, 'latin1');
    this.bodyEnd = Buffer.concat([Buffer.from('\r\n'), this.delimiter]);
    this.maxHeaderBytes = options.maxHeaderBytes ?? 8 * 1024;
  }

  /** Takes the next bytes of the body; throws MjpegStreamError (and keeps throwing) once the stream broke a rule. */
  push(chunk: Buffer): void {
    if (this.failed) throw this.failed;
    this.chunks.push(chunk);
    this.size += chunk.length;
    try {
      while (this.step()) { /* each step consumes what it can */ }
    } catch (err) {
      this.failed = err instanceof MjpegStreamError ? err : new MjpegStreamError(String(err));
      this.chunks = [];
      this.size = 0;
      throw this.failed;
    }
  }

  private get pending(): Buffer {
    if (this.chunks.length !== 1) this.chunks = [Buffer.concat(this.chunks, this.size)];
    return this.chunks[0];
  }

  private set pending(rest: Buffer) {
    this.chunks = [rest];
    this.size = rest.length;
  }

  /** One move of the state machine; false when it needs more bytes. */
  private step(): boolean {
    switch (this.state.at) {
      case 'delimiter': {
        const at = this.pending.indexOf(this.delimiter);
        if (at < 0) {
          if (this.pending.length > this.maxHeaderBytes + this.delimiter.length) throw new MjpegStreamError('No part delimiter in the stream');
          return false;
        }
        if (at > this.maxHeaderBytes) throw new MjpegStreamError('Too many bytes before a part delimiter');
        const lineEnd = this.pending.indexOf('\n', at + this.delimiter.length);
        if (lineEnd < 0) {
          if (this.pending.length - at > this.delimiter.length + 256) throw new MjpegStreamError('A delimiter line that does not end');
          return false;
        }
        const rest = this.pending.toString('latin1', at + this.delimiter.length, lineEnd).trim();
        if (rest.startsWith('--')) throw new MjpegStreamError('The stream ended (closing delimiter)');
        this.pending = this.pending.subarray(lineEnd + 1);
        this.state = { at: 'headers' };
        return true;
      }
      case 'headers': {
        const crlf = this.pending.indexOf('\r\n\r\n');
        const lf = this.pending.indexOf('\n\n');
        const end = crlf >= 0 && (lf < 0 || crlf < lf) ? { at: crlf, size: 4 } : lf >= 0 ? { at: lf, size: 2 } : undefined;
        // A part without headers starts its body at once (a blank line right after the delimiter).
        const blank = this.pending.subarray(0, 2).toString('latin1') === '\r\n' ? 2 : this.pending[0] === 0x0a ? 1 : 0;
        if (blank) {
          this.pending = this.pending.subarray(blank);
          this.state = { at: 'body' };
          return true;
        }
        if (!end) {
          if (this.pending.length > this.maxHeaderBytes) throw new MjpegStreamError('A part header block over the limit');
          return false;
        }
        if (end.at > this.maxHeaderBytes) throw new MjpegStreamError('A part header block over the limit');
        const headers = this.pending.toString('latin1', 0, end.at);
        this.pending = this.pending.subarray(end.at + end.size);
        this.state = { at: 'body', length: contentLength(headers, this.options.maxPartBytes) };
        return true;
      }
      case 'body': {
        const { length } = this.state;
        if (length !== undefined) {
          if (this.size < length) return false;
          this.emit(this.pending.subarray(0, length));
          this.pending = this.pending.subarray(length);
        } else {
          const at = this.pending.indexOf(this.bodyEnd);
          if (at < 0) {
            if (this.pending.length > this.options.maxPartBytes + this.bodyEnd.length) throw new MjpegStreamError(`A part over ${this.options.maxPartBytes} bytes`);
            return false;
          }
          if (at > this.options.maxPartBytes) throw new MjpegStreamError(`A part over ${this.options.maxPartBytes} bytes`);
          this.emit(this.pending.subarray(0, at));
          this.pending = this.pending.subarray(at + 2);
        }
        this.state = { at: 'delimiter' };
        return true;
      }
    }
  }

  private emit(body: Buffer): void {
    this.parts++;
    // A copy: the part must not keep the whole received chunk alive.
    if (body.length) this.onPart(Buffer.from(body));
  }
}

function contentLength(headers: string, max: number): number | undefined {
  const match = /^content-length[ \t]*:[ \t]*(\S*)[ \t]*$/im.exec(headers);
  if (!match) return undefined;
  if (!/^\d{1,10}$/.test(match[1])) throw new MjpegStreamError(`A part with Content-Length '${match[1].slice(0, 20)}'`);
  const length = Number(match[1]);
  if (length > max) throw new MjpegStreamError(`A part of ${length} bytes, over ${max}`);
  return length;
}
