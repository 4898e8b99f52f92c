/** Changing and deleting uploaded applications (spec 4.1 update/delete, 2.4 updatable properties). */
import { ApiFailure } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { lockBlob, type BlobStore } from '../apps/blob-store';
import { requireEntitlement } from '../auth/entitlements';
import { withTx, type Db, type Tx } from '../store/database';
import { applicationNotFound } from './application-commands';
import { readDeferred, type Deferred } from './deferred-input';

/** Legacy text of the vendor server for a delete of an unknown id (wire rule 29, docs/wire-rules.md; real newline). */
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

async function removeUnreferencedBlobs(trx: Tx, blobs: BlobStore, candidates: string[]): Promise<string[]> {
  const removed: string[] = [];
  for (const sha256 of candidates.sort()) {
    await lockBlob(trx, sha256);
    const still = await trx.selectFrom('applications').select('id').where('blob_sha256', '=', sha256)
      .limit(1).executeTakeFirst();
    if (still) continue;
    await blobs.remove(trx, sha256);
    removed.push(sha256);
  }
  return removed;
}
