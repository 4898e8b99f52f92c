/** Test helpers for the domain tests: users, device rows, a link server with no gateway connected. */
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Entitlement, type DeviceOperatingSystem, type Entitlement as EntitlementName } from '@devicelab/shared';
import { BlobStore } from '../../src/apps/blob-store';
import type { AuthenticatedUser } from '../../src/auth/authenticated-user';
import type { UploadInput } from '../../src/domain/applications';
import { startLinkServer, type LinkServer } from '../../src/gateways/link-server';
import type { Db } from '../../src/store/database';
import type { NewDevice } from '../../src/store/schema';

export const ALL: readonly EntitlementName[] = Entitlement;

export async function createUser(
  db: Db, login: string, entitlements: readonly EntitlementName[] = ALL, names: { first?: string; last?: string } = {},
): Promise<AuthenticatedUser> {
  const row = await db.insertInto('users')
    .values({ login, first_name: names.first ?? null, last_name: names.last ?? null })
    .returning('id').executeTakeFirstOrThrow();
  const displayName = [names.first, names.last].filter(Boolean).join(' ') || login;
  return { id: row.id, login, displayName, entitlements: new Set(entitlements), roles: [] };
}

let serial = 0;
export async function insertDevice(db: Db, values: Partial<NewDevice> = {}) {
  serial += 1;
  const vuid = values.vendor_unique_identifier ?? `SER${process.pid}X${serial}`;
  return db.insertInto('devices').values({
    vendor_unique_identifier: vuid,
    serial_number: vuid,
    name: `Device ${serial}`,
    operating_system: 'Android',
    availability: 'Online',
    readiness: 'Ready',
    ...values,
  }).returningAll().executeTakeFirstOrThrow();
}

/**
 * The real link server with no gateway connected: commands fail as they do when a device's gateway is away.
 * Tests of commands that reach devices run on a whole lab (support/lab.ts).
 */
export async function startIdleLinkServer(db: Db): Promise<LinkServer> {
  const blobs = new BlobStore(db);
  return startLinkServer({ db, blobs, port: 0, host: '127.0.0.1' });
}

/** A copy of `bytes` in `dir` as the upload middleware leaves it (hashed while received); uploadApplication removes it. */
export function stagedUpload(
  dir: string, originalName: string, bytes: Buffer,
  operatingSystem: DeviceOperatingSystem = originalName.endsWith('.ipa') ? 'iOS' : 'Android',
): UploadInput {
  const p = path.join(dir, `${randomUUID()}.upload`);
  writeFileSync(p, bytes);
  return { path: p, originalName, operatingSystem, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** stagedUpload of a file. */
export const stagedCopy = (dir: string, source: string, originalName: string, operatingSystem?: DeviceOperatingSystem) =>
  stagedUpload(dir, originalName, readFileSync(source), operatingSystem);
