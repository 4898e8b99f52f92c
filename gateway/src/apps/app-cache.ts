/**
 * Content-addressed cache of app binaries: `<cacheDir>/<sha256><extension>`, the extension being the platform's file
 * type (`.apk`, `.ipa`: installers look at it). A blob is downloaded once (to a temp
 * file, SHA-256 verified, then renamed into place); concurrent requests for one address share one download, and can
 * read the bytes while they arrive (`arriving`). A temp file is named `.<sha256>.<pid>.<random>.part`: one whose process is
 * gone (killed mid-download) is removed when a cache opens on the folder and when the same address completes; one
 * another running gateway is writing (a shared folder) is left alone.
 */
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, readdir, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { ArrivingApp } from '../drivers/device-driver';
import { ArrivingFile } from './arriving-file';

const SHA256 = /^[0-9a-f]{64}$/;
const EXTENSION = /^\.[a-z0-9]{1,8}$/;
/** A download's temp file: address, then the downloading process's id (absent in older versions), then a random tag. */
const TEMP_FILE = /^\.([0-9a-f]{64})\.(?:(\d+)\.)?[0-9a-f]+\.part$/;

export class BlobDigestMismatchError extends Error {
  constructor(expected: string, actual: string) {
    super(`Downloaded app binary has SHA-256 ${actual}, expected ${expected}`);
    this.name = 'BlobDigestMismatchError';
  }
}

/** Reads a blob from its source; `announce` hears its whole size as soon as the source tells it (its first chunk). */
export type BlobSource = (announce: (totalSize: number) => void) => AsyncIterable<Buffer>;

export class BlobSizeMismatchError extends Error {
  constructor(announced: number, received: number) {
    super(`Downloaded app binary has ${received} bytes, the hub announced ${announced}`);
    this.name = 'BlobSizeMismatchError';
  }
}

export class AppCache {
  /** Downloads running, by target path. */
  private readonly pending = new Map<string, ArrivingFile>();
  /** Temp files this process is writing now. */
  private readonly writing = new Set<string>();
  /** Settles once the temp files of downloads nobody runs any more are gone from the folder. */
  readonly leftoversRemoved: Promise<void>;

  constructor(readonly cacheDir: string) {
    this.leftoversRemoved = this.removeLeftovers();
  }

  pathFor(sha256: string, extension: string): string {
    if (!EXTENSION.test(extension)) throw new Error(`Not an app file extension: ${extension}`);
    return path.join(this.cacheDir, `${normalise(sha256)}${extension}`);
  }

  async has(sha256: string, extension: string): Promise<boolean> {
    try {
      return (await stat(this.pathFor(sha256, extension))).isFile();
    } catch {
      return false;
    }
  }

  /** Returns the local path of the blob, downloading it through `fetch` when it is not cached yet. */
  ensure(sha256: string, extension: string, fetch: BlobSource): Promise<string> {
    return this.start(sha256, extension, fetch).complete;
  }

  /**
   * The blob as soon as its size is known, readable while it downloads (a cached blob has arrived already).
   * Rejects when the download fails before its size is known; later failures make its readers throw.
   */
  arriving(sha256: string, extension: string, fetch: BlobSource): Promise<ArrivingApp> {
    return this.start(sha256, extension, fetch).whenSized();
  }

  /** The blob's download, shared by every request for it while it runs. */
  private start(sha256: string, extension: string, fetch: BlobSource): ArrivingFile {
    const key = this.pathFor(sha256, extension);
    const running = this.pending.get(key);
    if (running) return running;
    const address = normalise(sha256);
    const file = new ArrivingFile(path.join(this.cacheDir, `.${address}.${process.pid}.${randomBytes(6).toString('hex')}.part`));
    this.pending.set(key, file);
    this.writing.add(file.temp);
    // Off the list before it settles: a request that hears of the outcome and asks again starts afresh.
    void this.download(file, address, extension, fetch, () => {
      this.pending.delete(key);
      this.writing.delete(file.temp);
    });
    return file;
  }

  /** Removes temp files (of `sha256` only, when given) whose download no running process continues. */
  private async removeLeftovers(sha256?: string): Promise<void> {
    const names = await readdir(this.cacheDir).catch(() => [] as string[]);
    await Promise.all(names.map(async (name) => {
      const match = TEMP_FILE.exec(name);
      if (!match || (sha256 !== undefined && match[1] !== sha256)) return;
      const file = path.join(this.cacheDir, name);
      const pid = match[2] === undefined ? undefined : Number(match[2]);
      const continued = pid === process.pid ? this.writing.has(file) : pid !== undefined && isRunning(pid);
      if (!continued) await unlink(file).catch(() => undefined);
    }));
  }

  /** Settles `file`: finished once verified and renamed into place, failed otherwise. Never rejects. */
  private async download(file: ArrivingFile, sha256: string, extension: string, fetch: BlobSource, done: () => void): Promise<void> {
    const target = this.pathFor(sha256, extension);
    const cached = await stat(target).catch(() => undefined);
    if (cached?.isFile()) {
      done();
      file.grew(cached.size);
      file.finish(target);
      return;
    }
    const temp = file.temp;
    const hash = createHash('sha256');
    let received = 0;
    let out: WriteStream | undefined;
    try {
      await mkdir(this.cacheDir, { recursive: true });
      const stream = out = createWriteStream(temp);
      const outDone = new Promise<void>((resolve, reject) => {
        stream.on('finish', resolve);
        stream.on('error', reject);
      });
      outDone.catch(() => undefined); // observed below; avoid an unhandled rejection on early failure
      for await (const chunk of fetch((size) => file.announced(size))) {
        hash.update(chunk);
        received += chunk.length;
        // Readers follow the bytes on disk: each chunk counts once written.
        const taken = stream.write(chunk, (err) => { if (!err) file.grew(chunk.length); });
        // events.once removes its 'error' listener again on 'drain': a listener per wait would pile up (one per
        // 16 KiB of a large app, and Node's MaxListenersExceededWarning on the gateway's output).
        if (!taken) await once(stream, 'drain');
      }
      stream.end();
      await outDone;
      const actual = hash.digest('hex');
      if (actual !== sha256) throw new BlobDigestMismatchError(sha256, actual);
      const announced = file.announcedSize;
      if (announced !== undefined && announced !== received) throw new BlobSizeMismatchError(announced, received);
      await rename(temp, target);
      await this.removeLeftovers(sha256);
      done();
      file.finish(target);
    } catch (err) {
      if (out && !out.closed) {
        const stream = out;
        const closed = new Promise<void>((resolve) => stream.once('close', () => resolve()));
        stream.destroy();
        await closed;
      }
      await unlink(temp).catch(() => undefined);
      done();
      file.fail(err instanceof Error ? err : new Error(String(err)));
    }
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // alive, owned by another user
  }
}

function normalise(sha256: string): string {
  const key = sha256.trim().toLowerCase();
  if (!SHA256.test(key)) throw new Error(`Not a SHA-256 content address: ${sha256}`);
  return key;
}
