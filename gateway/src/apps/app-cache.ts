/**
 * Content-addressed cache of app binaries: `<cacheDir>/<sha256><extension>`, the extension being the platform's file
 * type (`.apk`, `.ipa`: installers look at it). A blob is downloaded once (to a temp
 * file, SHA-256 verified, then renamed into place); concurrent requests for one address share one download.
 */
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';

const SHA256 = /^[0-9a-f]{64}$/;
const EXTENSION = /^\.[a-z0-9]{1,8}$/;

export class BlobDigestMismatchError extends Error {
  constructor(expected: string, actual: string) {
    super(`Downloaded app binary has SHA-256 ${actual}, expected ${expected}`);
    this.name = 'BlobDigestMismatchError';
  }
}

export class AppCache {
  private readonly pending = new Map<string, Promise<string>>();

  constructor(readonly cacheDir: string) {}

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
  ensure(sha256: string, extension: string, fetch: () => AsyncIterable<Buffer>): Promise<string> {
    const key = this.pathFor(sha256, extension);
    const running = this.pending.get(key);
    if (running) return running;
    const job = this.download(normalise(sha256), extension, fetch).finally(() => this.pending.delete(key));
    this.pending.set(key, job);
    return job;
  }

  private async download(sha256: string, extension: string, fetch: () => AsyncIterable<Buffer>): Promise<string> {
    const target = this.pathFor(sha256, extension);
    if (await this.has(sha256, extension)) return target;
    await mkdir(this.cacheDir, { recursive: true });
    const temp = path.join(this.cacheDir, `.${sha256}.${randomBytes(6).toString('hex')}.part`);
    const hash = createHash('sha256');
    const out = createWriteStream(temp);
    const outDone = new Promise<void>((resolve, reject) => {
      out.on('finish', resolve);
      out.on('error', reject);
    });
    outDone.catch(() => undefined); // observed below; avoid an unhandled rejection on early failure
    try {
      for await (const chunk of fetch()) {
        hash.update(chunk);
        // events.once removes its 'error' listener again on 'drain': a listener per wait would pile up (one per
        // 16 KiB of a large app, and Node's MaxListenersExceededWarning on the gateway's output).
        if (!out.write(chunk)) await once(out, 'drain');
      }
      out.end();
      await outDone;
      const actual = hash.digest('hex');
      if (actual !== sha256) throw new BlobDigestMismatchError(sha256, actual);
      await rename(temp, target);
      return target;
    } catch (err) {
      if (!out.closed) {
        const closed = new Promise<void>((resolve) => out.once('close', () => resolve()));
        out.destroy();
        await closed;
      }
      await unlink(temp).catch(() => undefined);
      throw err;
    }
  }
}

function normalise(sha256: string): string {
  const key = sha256.trim().toLowerCase();
  if (!SHA256.test(key)) throw new Error(`Not a SHA-256 content address: ${sha256}`);
  return key;
}
