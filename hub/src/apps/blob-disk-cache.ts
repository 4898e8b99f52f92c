/**
 * This replica's copies of app binaries on local disk, in front of the blob store in PostgreSQL. PostgreSQL hands a
 * binary out at ~35-50 MB/s (bytea travels as hex and is decoded in this process), a local file at several hundred,
 * so with a copy here a cold install is bound by the gateway and the devices, not by the records store.
 * PostgreSQL stays the record: the store decides whether a blob exists before a copy is read, copies are made only of
 * verified bytes (an upload's hashed file, or a read from PostgreSQL whose digest matched), and the least recently
 * served copies go once the copies pass `maxBytes`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { copyFile, mkdir, open, readdir, rename, rm, stat, utimes, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

const COPY_NAME = /^[0-9a-f]{64}$/;

/** Fills a copy while the blob is read from PostgreSQL; the copy appears only if every byte came and the digest held. */
export interface BlobCopyWriter {
  write(chunk: Buffer): Promise<void>;
  finish(): Promise<void>;
  abandon(): Promise<void>;
}

export class BlobDiskCache {
  constructor(readonly dir: string, readonly maxBytes: number) {}

  /** The copy of `sha256` opened for reading when it holds `size` bytes; undefined when there is none. */
  async open(sha256: string, size: number): Promise<FileHandle | undefined> {
    const file = this.pathOf(sha256);
    const handle = await open(file, 'r').catch(() => undefined);
    if (!handle) return undefined;
    if ((await handle.stat()).size !== size) {
      await handle.close();
      return undefined;
    }
    await markServed(file);
    return handle;
  }

  /**
   * Makes `file`, whose bytes were verified to hash to `sha256` and which its owner is done with, the copy: moved
   * into place (copied only across file systems). Best effort: a full disk only costs speed.
   */
  async keepCopyOf(file: string, sha256: string): Promise<void> {
    const target = this.pathOf(sha256);
    if (await stat(target).then(() => true, () => false)) return;
    const temp = await this.tempPath(sha256);
    try {
      await rename(file, temp).catch(async (err: NodeJS.ErrnoException) => {
        if (err.code !== 'EXDEV') throw err;
        await copyFile(file, temp);
      });
      await rename(temp, target);
      // A new copy counts as just served: the upload's file keeps the time it was written, which may be older than
      // copies served since, and would make it the first to go.
      await markServed(target);
      await this.evict();
    } catch {
      await rm(temp, { force: true });
    }
  }

  /** A writer that fills the copy of `sha256` as its bytes are read from PostgreSQL (undefined when none can start). */
  async writer(sha256: string): Promise<BlobCopyWriter | undefined> {
    const temp = await this.tempPath(sha256).catch(() => undefined);
    const handle = temp && await open(temp, 'wx').catch(() => undefined);
    if (!temp || !handle) return undefined;
    const hash = createHash('sha256');
    let failed = false;
    const abandon = async () => {
      failed = true;
      await handle.close().catch(() => undefined);
      await rm(temp, { force: true });
    };
    return {
      write: async (chunk) => {
        if (failed) return;
        hash.update(chunk);
        await handle.write(chunk).catch(abandon);
      },
      finish: async () => {
        if (failed) return;
        await handle.close();
        if (hash.digest('hex') !== sha256) return abandon();
        await rename(temp, this.pathOf(sha256)).then(() => this.evict(), abandon);
      },
      abandon,
    };
  }

  /** Removes copies a killed process left half written. */
  async removeUnfinished(): Promise<void> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    await Promise.all(names.filter((name) => name.endsWith('.part')).map((name) => rm(path.join(this.dir, name), { force: true })));
  }

  /** Drops the copy of a blob the store no longer holds. */
  async remove(sha256: string): Promise<void> {
    await rm(this.pathOf(sha256), { force: true });
  }

  private pathOf(sha256: string): string {
    if (!COPY_NAME.test(sha256)) throw new Error(`not a SHA-256 address: ${sha256}`);
    return path.join(this.dir, sha256);
  }

  private async tempPath(sha256: string): Promise<string> {
    const name = path.basename(this.pathOf(sha256)); // pathOf refuses anything but an address
    await mkdir(this.dir, { recursive: true });
    return path.join(this.dir, `.${name}.${randomBytes(6).toString('hex')}.part`);
  }

  /** Removes the least recently served copies until the rest fit in `maxBytes`. */
  private async evict(): Promise<void> {
    const names = (await readdir(this.dir)).filter((name) => COPY_NAME.test(name));
    const copies = (await Promise.all(names.map(async (name) => {
      const info = await stat(path.join(this.dir, name)).catch(() => undefined);
      return info && { name, size: info.size, servedMs: info.mtimeMs };
    }))).filter((c) => c !== undefined).sort((a, b) => b.servedMs - a.servedMs);
    let total = 0;
    for (const copy of copies) {
      total += copy.size;
      if (total > this.maxBytes) await rm(path.join(this.dir, copy.name), { force: true });
    }
  }
}

/** A copy's time is when it was last served (or made): the least recent go first when space runs out. */
async function markServed(file: string): Promise<void> {
  const now = new Date();
  await utimes(file, now, now).catch(() => undefined);
}
