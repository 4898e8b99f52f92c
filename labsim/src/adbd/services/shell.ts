/**
 * `shell:` (v1) and `shell,v2,...:` services.
 *
 * v1: raw bytes both ways, stdout and stderr merged, no exit code; the
 * stream closes when the process ends (adbkit only uses this variant).
 * v2: frames of [id:u8][len:u32 LE][data]; host sends stdin (0) and
 * close-stdin (4); device sends stdout (1), stderr (2), exit (3, one byte).
 */
import type { AdbStream } from '../stream';
import type { DevicePort } from '../device-port';

const ID_STDIN = 0;
const ID_STDOUT = 1;
const ID_STDERR = 2;
const ID_EXIT = 3;
const ID_CLOSE_STDIN = 4;

function encodeShellFrame(id: number, data: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.writeUInt8(id, 0);
  header.writeUInt32LE(data.length, 1);
  return Buffer.concat([header, data]);
}

/** Streaming decoder for host -> device shell v2 frames. */
class ShellFrameDecoder {
  private buf: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Array<{ id: number; data: Buffer }> {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const frames: Array<{ id: number; data: Buffer }> = [];
    while (this.buf.length >= 5) {
      const len = this.buf.readUInt32LE(1);
      if (this.buf.length < 5 + len) break;
      frames.push({ id: this.buf[0], data: this.buf.subarray(5, 5 + len) });
      this.buf = this.buf.subarray(5 + len);
    }
    return frames;
  }
}

/** Resolves when the host closes the stream (or the transport dies). */
export function streamGone(stream: AdbStream): Promise<void> {
  return stream.closed ? Promise.resolve() : new Promise((resolve) => stream.once('close', () => resolve()));
}

/** The host's bytes for the command's input, in order; ends when the host closes stdin or the stream. */
export class StreamInput {
  private chunks: Buffer[] = [];
  private ended = false;
  private wake: (() => void) | undefined;

  push(data: Buffer): void {
    if (this.ended) return;
    this.chunks.push(data);
    this.wake?.();
  }

  end(): void {
    this.ended = true;
    this.wake?.();
  }

  async read(): Promise<Buffer | null> {
    while (this.chunks.length === 0 && !this.ended) await new Promise<void>((resolve) => (this.wake = resolve));
    this.wake = undefined;
    return this.chunks.shift() ?? null;
  }

  close(): void {
    this.chunks = [];
    this.end();
  }
}

export function startShellService(stream: AdbStream, device: DevicePort, command: string, v2: boolean): void {
  const input = new StreamInput();
  stream.on('close', () => input.end());
  if (v2) {
    const decoder = new ShellFrameDecoder();
    stream.on('data', (chunk: Buffer) => {
      for (const frame of decoder.push(chunk)) {
        if (frame.id === ID_STDIN) input.push(frame.data);
        else if (frame.id === ID_CLOSE_STDIN) input.end();
        // ID_WINDOW_SIZE: no terminal is simulated, so there is nothing to resize.
      }
    });
  } else stream.on('data', (d: Buffer) => input.push(d));
  device
    .runShell(command, {
      input,
      out: (d) => stream.write(v2 ? encodeShellFrame(ID_STDOUT, d) : d),
      err: (d) => stream.write(v2 ? encodeShellFrame(ID_STDERR, d) : d),
      gone: streamGone(stream),
    })
    .then(
      (status) => stream.end(v2 ? encodeShellFrame(ID_EXIT, Buffer.from([status & 0xff])) : undefined),
      (e: Error) => stream.end(v2 ? Buffer.concat([encodeShellFrame(ID_STDERR, Buffer.from(`sh: ${e.message}\n`)), encodeShellFrame(ID_EXIT, Buffer.from([255]))]) : `sh: ${e.message}\n`),
    );
}
