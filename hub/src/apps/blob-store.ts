/**
 * Content-addressed store of application binaries in PostgreSQL (migration 020), so that every hub replica on the
 * database serves what any replica received. A binary is cut into chunks of at most BLOB_STORE_CHUNK_BYTES rows,
 * written in one transaction that inserts the `blobs` row (its address) as well: a binary is visible at its address
 * complete or not at all, and a process killed mid-write leaves only rolled-back rows for vacuum. Reads go chunk by
 * chunk, one query each (no transaction held while a slow gateway downloads), so memory stays at a few chunks
 * whatever the size. The records keep only the address; gateways fetch a blob once by its SHA-256 and cache it.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { sql } from 'kysely';
import { withTx, type Db, type Tx } from '../store/database';
import type { BlobDiskCache } from './blob-disk-cache';

/** Stored chunk size: large enough that per-row overhead is small, small enough to keep memory bounded. */
export const BLOB_STORE_CHUNK_BYTES = 1024 * 1024;

const SHA256_HEX = /^[0-9a-f]{64}$/;

export interface StoredBlob { sha256: string; size: number; chunkCount: number }

/** The file given to adopt does not hash to the address it was given for: nothing was stored. */
export class BlobDigestError extends Error {
  constructor(readonly expected: string, readonly actual: string) {
    super(`the file hashes to ${actual}, not ${expected}`);
    this.name = 'BlobDigestError';
  }
}

/** A blob was removed while it was being read (its application deleted meanwhile). */
export class BlobGoneError extends Error {
  constructor(readonly sha256: string) {
    super(`blob ${sha256} was removed while it was read`);
    this.name = 'BlobGoneError';
  }
}

export class BlobStore {
  /** `copies`: this replica's disk copies, read instead of PostgreSQL where they exist (blob-disk-cache.ts). */
  constructor(private readonly db: Db, private readonly copies?: BlobDiskCache) {}

  /** After the upload that stored `sha256` committed: its verified file becomes the disk copy installs read. */
  async keepCopyOf(file: string, sha256: string): Promise<void> {
    await this.copies?.keepCopyOf(file, sha256);
  }

  /**
   * Takes a file whose SHA-256 is known (hashed while it was received) into the store within `trx`, or, when the
   * store already holds that binary, writes nothing. Returns whether the store gained the blob. The file is hashed
   * again while it is copied, and a mismatch fails the transaction. Holds the blob's lock (`lockBlob`) until `trx`
   * ends, so a concurrent adopt of the same binary waits and then finds it stored, and a delete cannot remove it
   * before the caller's rows refer to it. The caller removes `file` afterwards.
   */
  async adopt(trx: Tx, file: string, sha256: string): Promise<{ added: boolean }> {
    if (!SHA256_HEX.test(sha256)) throw new Error(`not a SHA-256 address: ${sha256}`);
    await lockBlob(trx, sha256);
    const present = await trx.selectFrom('blobs').select('sha256').where('sha256', '=', sha256).executeTakeFirst();
    if (present) return { added: false };
    const hash = createHash('sha256');
    let size = 0;
    let seq = 0;
    // One chunk in memory at a time: the next is read only once the previous row is written (backpressure).
    for await (const data of createReadStream(file, { highWaterMark: BLOB_STORE_CHUNK_BYTES }) as AsyncIterable<Buffer>) {
      hash.update(data);
      size += data.length;
      await trx.insertInto('blob_chunks').values({ sha256, seq, data }).execute();
      seq++;
    }
    const actual = hash.digest('hex');
    if (actual !== sha256) throw new BlobDigestError(sha256, actual);
    await trx.insertInto('blobs').values({ sha256, byte_count: size, chunk_count: seq }).execute();
    return { added: true };
  }

  /** Hashes a file and adopts it in a transaction of its own (tests, importing disk blobs). */
  async putFile(file: string): Promise<StoredBlob> {
    const hash = createHash('sha256');
    for await (const data of createReadStream(file) as AsyncIterable<Buffer>) hash.update(data);
    const sha256 = hash.digest('hex');
    await withTx(this.db, (trx) => this.adopt(trx, file, sha256));
    return (await this.stat(sha256))!;
  }

  /** The stored blob at `sha256`, or undefined (also for anything that is not a SHA-256 address). */
  async stat(sha256: string): Promise<StoredBlob | undefined> {
    if (!SHA256_HEX.test(sha256)) return undefined;
    const row = await this.db.selectFrom('blobs').select(['byte_count', 'chunk_count'])
      .where('sha256', '=', sha256).executeTakeFirst();
    return row && { sha256, size: Number(row.byte_count), chunkCount: row.chunk_count };
  }

  async has(sha256: string): Promise<boolean> {
    return (await this.stat(sha256)) !== undefined;
  }

  /**
   * The blob's bytes in order: from the disk copy when there is one, else one stored chunk per query (the next
   * fetched while the consumer handles the current one), filling the disk copy on the way. Throws BlobGoneError
   * when the blob is removed before every chunk was read from PostgreSQL.
   */
  async *read(blob: StoredBlob): AsyncGenerator<Buffer> {
    const copy = await this.copies?.open(blob.sha256, blob.size);
    if (copy) {
      try {
        yield* readChunks(copy);
      } finally {
        await copy.close();
      }
      return;
    }
    const writer = await this.copies?.writer(blob.sha256);
    let complete = false;
    try {
      for await (const chunk of this.readStored(blob)) {
        await writer?.write(chunk);
        yield chunk;
      }
      complete = true;
    } finally {
      await (complete ? writer?.finish() : writer?.abandon());
    }
  }

  private async *readStored(blob: StoredBlob): AsyncGenerator<Buffer> {
    const fetchChunk = (seq: number) => this.db.selectFrom('blob_chunks').select('data')
      .where('sha256', '=', blob.sha256).where('seq', '=', seq).executeTakeFirst();
    let next = blob.chunkCount > 0 ? fetchChunk(0) : undefined;
    // A prefetch the consumer never waits for (it stopped early) must not become an unhandled rejection.
    next?.catch(() => undefined);
    for (let seq = 0; next; seq++) {
      const row = await next;
      next = seq + 1 < blob.chunkCount ? fetchChunk(seq + 1) : undefined;
      next?.catch(() => undefined);
      if (!row) throw new BlobGoneError(blob.sha256);
      yield row.data;
    }
  }

  /** Removes a blob within `trx` (chunks go with it); a missing one is not an error (removal is idempotent). */
  async remove(trx: Tx, sha256: string): Promise<void> {
    await trx.deleteFrom('blobs').where('sha256', '=', sha256).execute();
    await this.copies?.remove(sha256);
  }
}

/** A file's bytes in pieces of a stored chunk's size. */
async function* readChunks(file: FileHandle): AsyncGenerator<Buffer> {
  for (let at = 0; ; ) {
    const piece = Buffer.allocUnsafe(BLOB_STORE_CHUNK_BYTES);
    const { bytesRead } = await file.read(piece, 0, piece.length, at);
    if (bytesRead === 0) return;
    at += bytesRead;
    yield piece.subarray(0, bytesRead);
  }
}

/**
 * The lock of one binary, shared by adopt, uploads and deletes: an upload storing a binary waits for a delete's
 * transaction (and the other way round), so a blob is never removed while a new row starts referring to it.
 */
export async function lockBlob(trx: Tx, sha256: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${`blob:${sha256}`}))`.execute(trx);
}
