/**
 * Content-addressed store of application binaries on disk (`<dataDir>/blobs/<sha256>`). The records keep only
 * the address; gateways fetch a blob once by its SHA-256 and cache it.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, promises as fs, type ReadStream } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';

const SHA256_HEX = /^[0-9a-f]{64}$/;

interface StoredBlob { sha256: string; size: number; path: string }

export class BlobStore {
  constructor(private readonly root: string) {}

  /** Creates the store; copies a previous process left half-written (killed mid-copy) are removed. */
  async init(): Promise<void> {
    await fs.rm(path.join(this.root, 'tmp'), { recursive: true, force: true });
    await fs.mkdir(path.join(this.root, 'tmp'), { recursive: true });
  }

  /**
   * Takes a file whose SHA-256 is known (hashed while it was received) into the store: moved to its address, or,
   * when the store already holds that binary, left alone, so a re-upload writes nothing. Returns whether the
   * store gained the blob. The caller removes `file` afterwards (nothing is left to remove once it was moved).
   */
  async adopt(file: string, sha256: string): Promise<{ added: boolean }> {
    const target = this.pathOf(sha256);
    if (await this.has(sha256)) return { added: false };
    try {
      await fs.rename(file, target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
      // Another file system: copy beside the target first so the address never shows a partial file.
      const tmp = path.join(this.root, 'tmp', randomUUID());
      try {
        await pipeline(createReadStream(file), createWriteStream(tmp));
        await fs.rename(tmp, target);
      } finally {
        await fs.rm(tmp, { force: true });
      }
    }
    return { added: true };
  }

  /** Streams into a temporary file while hashing, then renames it to its address (idempotent). */
  async put(source: Readable): Promise<StoredBlob> {
    const tmp = path.join(this.root, 'tmp', randomUUID());
    const hash = createHash('sha256');
    let size = 0;
    source.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      size += chunk.length;
    });
    try {
      await pipeline(source, createWriteStream(tmp));
      const sha256 = hash.digest('hex');
      const target = this.pathOf(sha256);
      await fs.rename(tmp, target);
      return { sha256, size, path: target };
    } catch (err) {
      await fs.rm(tmp, { force: true });
      throw err;
    }
  }

  async putFile(file: string): Promise<StoredBlob> {
    return this.put(createReadStream(file));
  }

  pathOf(sha256: string): string {
    if (!SHA256_HEX.test(sha256)) throw new Error(`not a SHA-256 address: ${sha256}`);
    return path.join(this.root, sha256);
  }

  async has(sha256: string): Promise<boolean> {
    if (!SHA256_HEX.test(sha256)) return false;
    return fs.access(this.pathOf(sha256)).then(() => true, () => false);
  }

  open(sha256: string): ReadStream {
    return createReadStream(this.pathOf(sha256));
  }

  /** Removes a blob; a missing one is not an error (removal is idempotent). */
  async remove(sha256: string): Promise<void> {
    await fs.rm(this.pathOf(sha256), { force: true });
  }

  async size(sha256: string): Promise<number> {
    return (await fs.stat(this.pathOf(sha256))).size;
  }
}
