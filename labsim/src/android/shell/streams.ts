/** Byte streams between the commands of the in-process device shell: pipes, files, the adb stream. */

/** Written to a pipe whose reader has gone: the writer stops, as SIGPIPE stops it on a device (status 141). */
export class BrokenPipe extends Error {
  constructor() {
    super('Broken pipe');
  }
}

export interface Output {
  /** Throws BrokenPipe once nobody reads any more. */
  write(data: Buffer | string): void;
  /** Resolves when there is room again (a pipe whose reader lags holds its writer here). */
  drain(): Promise<void>;
  /** Resolves when nobody reads any more. */
  readonly broken: Promise<void>;
}

export interface Input {
  /** The next chunk, or null at the end. */
  read(): Promise<Buffer | null>;
  /** The reader is done: writers get BrokenPipe from now on. */
  close(): void;
}

const PIPE_CAPACITY = 64 * 1024;
const never = new Promise<void>(() => undefined);

export class Pipe implements Output, Input {
  private chunks: Buffer[] = [];
  private size = 0;
  private ended = false;
  private readerGone = false;
  private waiters: Array<() => void> = [];
  private markBroken!: () => void;
  readonly broken = new Promise<void>((resolve) => (this.markBroken = resolve));

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    waiters.forEach((w) => w());
  }

  private changed(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  write(data: Buffer | string): void {
    if (this.readerGone) throw new BrokenPipe();
    const chunk = typeof data === 'string' ? Buffer.from(data) : data;
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.size += chunk.length;
    this.wake();
  }

  async drain(): Promise<void> {
    while (this.size > PIPE_CAPACITY && !this.readerGone) await this.changed();
    if (this.readerGone) throw new BrokenPipe();
  }

  /** The writer is done. */
  end(): void {
    this.ended = true;
    this.wake();
  }

  async read(): Promise<Buffer | null> {
    while (this.chunks.length === 0 && !this.ended) await this.changed();
    const chunk = this.chunks.shift() ?? null;
    if (chunk) {
      this.size -= chunk.length;
      this.wake();
    }
    return chunk;
  }

  close(): void {
    this.readerGone = true;
    this.chunks = [];
    this.size = 0;
    this.markBroken();
    this.wake();
  }
}

/** Output into a sink that is always read (the adb stream, a file, a buffer). */
export function sinkOutput(sink: (data: Buffer) => void): Output {
  return {
    write: (data) => sink(typeof data === 'string' ? Buffer.from(data) : data),
    drain: () => Promise.resolve(),
    broken: never,
  };
}

/** Input of fixed bytes (a file read at redirection, or nothing). */
export function bufferInput(data: Buffer): Input {
  let done = data.length === 0;
  return {
    read: () => {
      if (done) return Promise.resolve(null);
      done = true;
      return Promise.resolve(data);
    },
    close: () => (done = true),
  };
}

/** Everything left on the input, up to `limit` bytes (beyond it, the rest is dropped). */
export async function readAll(input: Input, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for (let chunk = await input.read(); chunk; chunk = await input.read()) {
    if (size < limit) chunks.push(chunk.subarray(0, limit - size));
    size += chunk.length;
  }
  return Buffer.concat(chunks);
}

/** Lines of the input as they arrive (each with its newline, the last possibly without). */
export async function* readLines(input: Input): AsyncGenerator<string> {
  let pending = '';
  for (let chunk = await input.read(); chunk; chunk = await input.read()) {
    pending += chunk.toString('utf8');
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      yield pending.slice(0, nl + 1);
      pending = pending.slice(nl + 1);
    }
  }
  if (pending) yield pending;
}
