/**
 * A file the app cache is downloading, readable while it grows: readers follow the temp file on disk (no bytes kept
 * in memory) and wait for more, so installs can stream the binary as it arrives. The last byte is held back until the
 * download is verified: a streamed install never gets its whole declared size from a binary with a wrong digest.
 */
import { open, type FileHandle } from 'node:fs/promises';
import type { ArrivingApp } from '../drivers/device-driver';

export class ArrivingFile implements ArrivingApp {
  /** Bytes on disk in the temp file so far. */
  private written = 0;
  private finished: string | undefined;
  private failure: Error | undefined;
  private wakers: (() => void)[] = [];
  private knownSize: number | undefined;
  private sized: Promise<number>;
  private settleSize: { resolve: (size: number) => void; reject: (err: Error) => void } = { resolve: () => undefined, reject: () => undefined };
  readonly complete: Promise<string>;
  private settle: { resolve: (file: string) => void; reject: (err: Error) => void } = { resolve: () => undefined, reject: () => undefined };

  constructor(readonly temp: string) {
    this.sized = new Promise((resolve, reject) => { this.settleSize = { resolve, reject }; });
    this.complete = new Promise((resolve, reject) => { this.settle = { resolve, reject }; });
    // Nobody may wait for either (an install following the bytes reads them instead): no unhandled rejection.
    this.sized.catch(() => undefined);
    this.complete.catch(() => undefined);
  }

  /** The size the source announced (or, once finished, the size written); undefined before. */
  get announcedSize(): number | undefined {
    return this.knownSize;
  }

  get size(): number {
    if (this.knownSize === undefined) throw new Error('The size of an arriving file is read before it is known');
    return this.knownSize;
  }

  /** Resolves once the size is known (the download's first chunk said it, or the download ended). */
  whenSized(): Promise<this> {
    return this.sized.then(() => this);
  }

  /** The source announced the whole size. */
  announced(size: number): void {
    if (this.knownSize !== undefined) return;
    this.knownSize = size;
    this.settleSize.resolve(size);
  }

  grew(bytes: number): void {
    this.written += bytes;
    this.wake();
  }

  /** The download is verified and renamed into place at `file`. */
  finish(file: string): void {
    this.announced(this.written);
    this.finished = file;
    this.settle.resolve(file);
    this.wake();
  }

  fail(err: Error): void {
    this.failure = err;
    this.settleSize.reject(err);
    this.settle.reject(err);
    this.wake();
  }

  async *read(pieceBytes: number): AsyncIterable<Buffer> {
    const handle = await this.openFile();
    try {
      let at = 0;
      for (;;) {
        if (this.failure) throw this.failure;
        const total = this.finished !== undefined ? this.written : Math.min(this.written, this.size - 1);
        if (at >= total) {
          if (this.finished !== undefined) return;
          await new Promise<void>((resolve) => this.wakers.push(resolve));
          continue;
        }
        const piece = Buffer.allocUnsafe(Math.min(pieceBytes, total - at));
        const { bytesRead } = await handle.read(piece, 0, piece.length, at);
        if (bytesRead === 0) throw new Error('The app cache file ended before the bytes it was said to hold');
        at += bytesRead;
        yield bytesRead === piece.length ? piece : piece.subarray(0, bytesRead);
      }
    } finally {
      await handle.close();
    }
  }

  /**
   * The temp file while downloading (an open handle survives the rename), the cached file once renamed. The temp file
   * may not exist yet (the size is known before the first bytes are written): then wait for them.
   */
  private async openFile(): Promise<FileHandle> {
    for (;;) {
      if (this.failure) throw this.failure;
      if (this.finished !== undefined) return open(this.finished, 'r');
      try {
        return await open(this.temp, 'r');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        // Not written yet, renamed meanwhile, or removed after a failure: the next change tells which.
        if (!this.failure && this.finished === undefined) await new Promise<void>((resolve) => this.wakers.push(resolve));
      }
    }
  }

  private wake(): void {
    const wakers = this.wakers;
    this.wakers = [];
    for (const wake of wakers) wake();
  }
}
