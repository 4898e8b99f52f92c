/**
 * Upgrade path from hubs that kept binaries on disk (`<dataDir>/blobs/<sha256>`, before migration 020). At start,
 * every file there that an application refers to is copied into the blob store (hashed on the way) and then
 * removed, so an upgrade loses nothing. A file no application refers to (a leftover of an upload that failed) or
 * whose content does not match its name is left where it is and logged. Once nothing is left the folder goes.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Logger } from '@devicelab/shared';
import type { Db } from '../store/database';
import { withTx } from '../store/database';
import { BlobDigestError, type BlobStore } from './blob-store';

const SHA256_NAME = /^[0-9a-f]{64}$/;

export interface DiskBlobImport { imported: number; leftInPlace: string[] }

export async function importDiskBlobs(db: Db, blobs: BlobStore, dir: string, logger: Logger): Promise<DiskBlobImport> {
  const result: DiskBlobImport = { imported: 0, leftInPlace: [] };
  const names = await fs.readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  if (names.length === 0) return result;
  // Copies the old store left half-written (killed mid-copy across file systems).
  await fs.rm(path.join(dir, 'tmp'), { recursive: true, force: true });
  for (const name of names.filter((n) => SHA256_NAME.test(n))) {
    const file = path.join(dir, name);
    const referenced = await db.selectFrom('applications').select('id').where('blob_sha256', '=', name)
      .limit(1).executeTakeFirst();
    if (!referenced) {
      result.leftInPlace.push(file);
      continue;
    }
    try {
      await withTx(db, (trx) => blobs.adopt(trx, file, name));
    } catch (err) {
      if (!(err instanceof BlobDigestError)) throw err;
      logger.error({ err, file }, 'a stored binary does not match its address; left in place, not imported');
      result.leftInPlace.push(file);
      continue;
    }
    await fs.rm(file, { force: true });
    result.imported++;
  }
  if (result.imported > 0) logger.warn({ imported: result.imported, dir }, 'application binaries moved from disk into PostgreSQL');
  if (result.leftInPlace.length > 0) {
    logger.warn({ files: result.leftInPlace }, 'binaries on disk that no application refers to were not imported');
  }
  await fs.rmdir(dir).catch(() => undefined); // only when empty
  return result;
}
