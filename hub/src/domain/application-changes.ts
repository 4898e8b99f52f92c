/** Changing and deleting uploaded applications (spec 4.1 update/delete, 2.4 updatable properties). */
import { sql } from 'kysely';
import { ApiFailure } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import type { BlobStore } from '../apps/blob-store';
import { requireEntitlement } from '../auth/entitlements';
import { withTx, type Db, type Tx } from '../store/database';
import { applicationNotFound } from './application-commands';
import { readDeferred, type Deferred } from './deferred-input';

/** Legacy text of the vendor server for a delete of an unknown id (wire-contract 5; real newline). */
export const APPLICATION_NOT_FOUND_FOR_DELETE = 'Application not found.\nParameter name: application';

/**
 * Spec 2.4: displayName is the Application property with use "update"; enabled and notes are extensions (a
 * disabled application is kept and listed but refuses installs). `notes: null` clears them.
 */
export interface ApplicationChanges {
  displayName?: string;
  enabled?: boolean;
  notes?: string | null;
}

/**
 * ApplicationModify, checked before the id and the changes are read. The changes are complete and checked before
 * anything is written.
 */
export async function modifyApplication(
  db: Db, user: AuthenticatedUser, applicationId: Deferred<string>, changes: Deferred<ApplicationChanges>,
): Promise<void> {
  requireEntitlement(user, 'ApplicationModify');
  const id = readDeferred(applicationId);
  const { displayName, enabled, notes } = readDeferred(changes);
  const found = await db.selectFrom('applications').select('id').where('id', '=', id).executeTakeFirst();
  if (!found) throw new ApiFailure(applicationNotFound(id));
  const set = {
    ...(displayName !== undefined ? { display_name: displayName } : {}),
    ...(enabled !== undefined ? { enabled } : {}),
    ...(notes !== undefined ? { notes } : {}),
  };
  if (Object.keys(set).length === 0) return; // `{}` is a valid, empty change
  await db.updateTable('applications').set(set).where('id', '=', id).execute();
}

/**
 * ApplicationDelete. `all` deletes every upload with the same applicationIdentifier. Binaries no longer referenced
 * by any application are removed from the blob store.
 */
export async function deleteApplication(
  db: Db, blobs: BlobStore, user: AuthenticatedUser, id: string, options: { all?: boolean } = {},
): Promise<{ deletedIds: string[]; removedBlobs: string[] }> {
  requireEntitlement(user, 'ApplicationDelete');
  return withTx(db, async (trx) => {
    const app = await trx.selectFrom('applications').select(['id', 'application_identifier'])
      .where('id', '=', id).forUpdate().executeTakeFirst();
    if (!app) throw new ApiFailure(APPLICATION_NOT_FOUND_FOR_DELETE);
    let del = trx.deleteFrom('applications');
    del = options.all ? del.where('application_identifier', '=', app.application_identifier) : del.where('id', '=', id);
    const deleted = await del.returning(['id', 'blob_sha256']).execute();
    const removedBlobs = await removeUnreferencedBlobs(trx, blobs, [...new Set(deleted.map((d) => d.blob_sha256))]);
    return { deletedIds: deleted.map((d) => d.id), removedBlobs };
  });
}

/**
 * Lock key shared with uploads: an upload storing the same binary waits for the delete's transaction (and the other
 * way round), so a blob is never removed while a new row starts referring to it.
 */
export async function lockBlob(trx: Tx, sha256: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${`blob:${sha256}`}))`.execute(trx);
}

async function removeUnreferencedBlobs(trx: Tx, blobs: BlobStore, candidates: string[]): Promise<string[]> {
  const removed: string[] = [];
  for (const sha256 of candidates.sort()) {
    await lockBlob(trx, sha256);
    const still = await trx.selectFrom('applications').select('id').where('blob_sha256', '=', sha256)
      .limit(1).executeTakeFirst();
    if (still) continue;
    // Removed while the lock is held; if the commit then failed the rows would come back without their file,
    // which is the lesser evil compared with keeping orphaned binaries of every delete.
    await blobs.remove(sha256);
    removed.push(sha256);
  }
  return removed;
}
