/**
 * The blob store on real PostgreSQL (migration 020): binaries round-trip byte for byte whatever their size, a blob is
 * visible at its address complete or not at all, storing is idempotent (also when two transactions store the same
 * binary at once), removal is idempotent, a large binary passes with bounded memory, and binaries an older hub kept
 * on disk are imported at start.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, promises as fs, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { createLogger } from '@devicelab/shared';
import { BlobDigestError, BlobGoneError, BlobStore, BLOB_STORE_CHUNK_BYTES, type StoredBlob } from '../../src/apps/blob-store';
import { BlobDiskCache } from '../../src/apps/blob-disk-cache';
import { importDiskBlobs } from '../../src/apps/disk-blob-import';
import { withTx } from '../../src/store/database';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

const MiB = 1024 * 1024;
let t: TestDatabase;
let blobs: BlobStore;
const work = mkdtempSync(path.join(os.tmpdir(), 'blob-store-'));

beforeAll(async () => {
  t = await createTestDatabase({ maxConnections: 6 });
  blobs = new BlobStore(t.db);
});
afterAll(async () => {
  await t.drop();
  rmSync(work, { recursive: true, force: true });
});

let files = 0;
function fileWith(bytes: Buffer): { file: string; sha256: string } {
  const file = path.join(work, `f${++files}`);
  writeFileSync(file, bytes);
  return { file, sha256: sha256Of(bytes) };
}
const sha256Of = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function readAll(blob: StoredBlob): Promise<Buffer> {
  const pieces: Buffer[] = [];
  for await (const piece of blobs.read(blob)) pieces.push(piece);
  return Buffer.concat(pieces);
}

const rowCount = async (table: 'blobs' | 'blob_chunks') => Number((await t.db.selectFrom(table)
  .select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);

describe('blob store', () => {
  it.each([0, 1, MiB - 1, MiB, MiB + 1, 3.5 * MiB])('stores and reads back %i bytes byte for byte', async (size) => {
    const bytes = randomBytes(size);
    const { file, sha256 } = fileWith(bytes);
    const stored = await blobs.putFile(file);
    expect(stored).toEqual({ sha256, size, chunkCount: Math.ceil(size / BLOB_STORE_CHUNK_BYTES) });
    expect(await blobs.stat(sha256)).toEqual(stored);
    expect((await readAll(stored)).equals(bytes)).toBe(true);
  });

  it('finds nothing at an unknown or malformed address', async () => {
    expect(await blobs.stat('0'.repeat(64))).toBeUndefined();
    for (const address of ['not-a-sha', `../${'0'.repeat(64)}`, 'A'.repeat(64), '']) {
      expect(await blobs.has(address)).toBe(false);
    }
  });

  it('refuses a file that does not hash to the address it was given for, storing nothing', async () => {
    const { file } = fileWith(randomBytes(2 * MiB + 5));
    const claimed = sha256Of(Buffer.from('something else'));
    const before = [await rowCount('blobs'), await rowCount('blob_chunks')];
    await expect(withTx(t.db, (trx) => blobs.adopt(trx, file, claimed))).rejects.toThrow(BlobDigestError);
    expect(await blobs.has(claimed)).toBe(false);
    expect([await rowCount('blobs'), await rowCount('blob_chunks')]).toEqual(before);
  });

  it('a second store of the same binary writes nothing', async () => {
    const { file, sha256 } = fileWith(randomBytes(MiB + 100));
    expect(await withTx(t.db, (trx) => blobs.adopt(trx, file, sha256))).toEqual({ added: true });
    const written = async () => (await sql<{ xmin: string }>`select xmin::text from blob_chunks where sha256 = ${sha256}
      union all select xmin::text from blobs where sha256 = ${sha256}`.execute(t.db)).rows;
    const before = await written();
    expect(await withTx(t.db, (trx) => blobs.adopt(trx, file, sha256))).toEqual({ added: false });
    expect(await written()).toEqual(before);
  });

  it('shows nothing at the address until the writing transaction commits', async () => {
    const bytes = randomBytes(3 * MiB);
    const { file, sha256 } = fileWith(bytes);
    let commit!: () => void;
    const committing = new Promise<void>((resolve) => { commit = resolve; });
    let written!: () => void;
    const allWritten = new Promise<void>((resolve) => { written = resolve; });
    const writing = withTx(t.db, async (trx) => {
      await blobs.adopt(trx, file, sha256);
      written();
      await committing;
    });
    await allWritten;
    expect(await blobs.stat(sha256)).toBeUndefined();
    commit();
    await writing;
    const stored = await blobs.stat(sha256);
    expect((await readAll(stored!)).equals(bytes)).toBe(true);
  });

  it('two transactions storing the same binary at once store it once, complete', async () => {
    const bytes = randomBytes(4 * MiB + 3);
    const { file, sha256 } = fileWith(bytes);
    const copy = path.join(work, 'copy');
    await fs.copyFile(file, copy);
    const results = await Promise.all([
      withTx(t.db, (trx) => blobs.adopt(trx, file, sha256)),
      withTx(t.db, (trx) => blobs.adopt(trx, copy, sha256)),
    ]);
    expect(results.map((r) => r.added).sort()).toEqual([false, true]);
    const { rows } = await sql<{ n: string }>`select count(*) as n from blob_chunks where sha256 = ${sha256}`.execute(t.db);
    expect(Number(rows[0].n)).toBe(5);
    expect((await readAll((await blobs.stat(sha256))!)).equals(bytes)).toBe(true);
  });

  it('removal takes the chunks with it and is idempotent', async () => {
    const { file, sha256 } = fileWith(randomBytes(2 * MiB));
    await blobs.putFile(file);
    await withTx(t.db, (trx) => blobs.remove(trx, sha256));
    await withTx(t.db, (trx) => blobs.remove(trx, sha256));
    expect(await blobs.has(sha256)).toBe(false);
    const { rows } = await sql<{ n: string }>`select count(*) as n from blob_chunks where sha256 = ${sha256}`.execute(t.db);
    expect(Number(rows[0].n)).toBe(0);
  });

  it('a reader whose blob is removed under it gets BlobGoneError, not a short file', async () => {
    const { file } = fileWith(randomBytes(6 * MiB));
    const stored = await blobs.putFile(file);
    const reader = blobs.read(stored);
    await reader.next();
    await withTx(t.db, (trx) => blobs.remove(trx, stored.sha256));
    await expect((async () => { for await (const piece of reader) void piece; })()).rejects.toThrow(BlobGoneError);
  });

  it('stores and reads a 200 MB binary with memory bounded to a few chunks', async () => {
    const size = 200 * MiB;
    const file = path.join(work, 'large');
    const hash = createHash('sha256');
    const out = createWriteStream(file);
    const base = randomBytes(MiB);
    for (let i = 0; i < size / MiB; i++) {
      const piece = Buffer.from(base);
      piece.writeUInt32BE(i, 0); // every MiB differs
      hash.update(piece);
      if (!out.write(piece)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
    }
    await new Promise<void>((resolve) => out.end(() => resolve()));
    const sha256 = hash.digest('hex');

    let peak = 0;
    const sample = () => { peak = Math.max(peak, process.memoryUsage().rss); };
    const timer = setInterval(sample, 20);
    try {
      const baseline = process.memoryUsage().rss;
      await withTx(t.db, (trx) => blobs.adopt(trx, file, sha256));
      const stored = (await blobs.stat(sha256))!;
      expect(stored.size).toBe(size);
      const readBack = createHash('sha256');
      for await (const piece of blobs.read(stored)) {
        readBack.update(piece);
        sample();
      }
      expect(readBack.digest('hex')).toBe(sha256);
      // Holding the binary would take 200 MB at least; chunks in flight and garbage not yet collected stay far below.
      expect(peak - baseline).toBeLessThan(80 * MiB);
    } finally {
      clearInterval(timer);
      await withTx(t.db, (trx) => blobs.remove(trx, sha256));
      rmSync(file, { force: true });
    }
  }, 300_000);
});

describe("a hub's disk copies in front of PostgreSQL", () => {
  const copiesDir = path.join(work, 'copies');
  const copied = (sha256: string) => existsSync(path.join(copiesDir, sha256));
  const withCopies = (maxBytes = 64 * MiB) => new BlobStore(t.db, new BlobDiskCache(copiesDir, maxBytes));
  const readFrom = async (store: BlobStore, blob: StoredBlob) => {
    const pieces: Buffer[] = [];
    for await (const piece of store.read(blob)) pieces.push(piece);
    return Buffer.concat(pieces);
  };
  afterEach(() => rmSync(copiesDir, { recursive: true, force: true }));

  it('the first read from PostgreSQL leaves a verified copy; later reads come from it, not from PostgreSQL', async () => {
    const bytes = randomBytes(2 * MiB + 7);
    const { file, sha256 } = fileWith(bytes);
    const store = withCopies();
    const stored = await store.putFile(file);
    expect(copied(sha256)).toBe(false);
    expect((await readFrom(store, stored)).equals(bytes)).toBe(true);
    expect(copied(sha256)).toBe(true);
    // The chunks in PostgreSQL are changed behind the hub's back: a read that still went there would see it.
    await sql`update blob_chunks set data = ${Buffer.alloc(MiB)} where sha256 = ${sha256} and seq = 0`.execute(t.db);
    expect((await readFrom(store, stored)).equals(bytes)).toBe(true);
    await withTx(t.db, (trx) => store.remove(trx, sha256));
    expect(copied(sha256)).toBe(false);
  });

  it('a read from PostgreSQL whose bytes do not match the address, or that stops early, leaves no copy', async () => {
    const { file, sha256 } = fileWith(randomBytes(3 * MiB));
    const store = withCopies();
    const stored = await store.putFile(file);
    const reader = store.read(stored);
    await reader.next();
    await reader.return(undefined); // the gateway went away after the first chunk
    expect(await fs.readdir(copiesDir)).toEqual([]);
    await sql`update blob_chunks set data = ${Buffer.alloc(MiB)} where sha256 = ${sha256} and seq = 1`.execute(t.db);
    await readFrom(store, stored);
    expect(await fs.readdir(copiesDir)).toEqual([]);
  });

  it("an upload's file becomes the copy; the least recently served copies go once they pass the limit", async () => {
    const store = withCopies(5 * MiB);
    const blobsOf = [0, 1, 2].map(() => fileWith(randomBytes(2 * MiB)));
    for (const { file, sha256 } of blobsOf.slice(0, 2)) {
      await store.putFile(file);
      await store.keepCopyOf(file, sha256);
    }
    expect(blobsOf.map(({ sha256 }) => copied(sha256))).toEqual([true, true, false]);
    // Serving the first makes it the most recent: the second goes when the third arrives.
    await new Promise((r) => setTimeout(r, 20));
    await readFrom(store, (await store.stat(blobsOf[0].sha256))!);
    // The third upload's file was written long before (a slow upload): its copy still counts as the newest.
    const anHourAgo = new Date(Date.now() - 3_600_000);
    await fs.utimes(blobsOf[2].file, anHourAgo, anHourAgo);
    await store.putFile(blobsOf[2].file);
    await store.keepCopyOf(blobsOf[2].file, blobsOf[2].sha256);
    expect(blobsOf.map(({ sha256 }) => copied(sha256))).toEqual([true, false, true]);
  });
});

describe('importing binaries an older hub kept on disk', () => {
  it('imports the referenced ones and removes their files; leaves leftovers and damaged files in place', async () => {
    const dir = path.join(work, 'old-blobs');
    mkdirSync(path.join(dir, 'tmp'), { recursive: true });
    writeFileSync(path.join(dir, 'tmp', 'half-a-copy'), 'x');
    const referenced = randomBytes(MiB + 7);
    const unreferenced = randomBytes(10);
    const damaged = randomBytes(20);
    const referencedSha = sha256Of(referenced);
    const damagedSha = sha256Of(Buffer.from('what it was'));
    writeFileSync(path.join(dir, referencedSha), referenced);
    writeFileSync(path.join(dir, sha256Of(unreferenced)), unreferenced);
    writeFileSync(path.join(dir, damagedSha), damaged);
    for (const [i, sha] of [referencedSha, damagedSha].entries()) {
      await t.db.insertInto('applications').values({
        display_name: 'Old', application_identifier: `com.old${i}`, operating_system: 'Android', blob_sha256: sha,
        file_name: 'old.apk', file_byte_count: '10', version_counter: 1, version: null, build_version: null,
        minimum_os_version: null, icon_blob: null, vendor_application_name: null, provision_expiration_date: null,
        signing_certificate_name: null, app_team_identifier: null, agent_dylib_team_identifier: null,
        launch_activity: null, platform: null, notes: null,
      }).execute();
    }
    const logger = createLogger('test', 'silent');

    const result = await importDiskBlobs(t.db, blobs, dir, logger);
    expect(result.imported).toBe(1);
    expect(result.leftInPlace.sort()).toEqual([path.join(dir, sha256Of(unreferenced)), path.join(dir, damagedSha)].sort());
    expect((await readAll((await blobs.stat(referencedSha))!)).equals(referenced)).toBe(true);
    expect(await blobs.has(damagedSha)).toBe(false);
    expect(existsSync(path.join(dir, referencedSha))).toBe(false);
    expect(existsSync(path.join(dir, 'tmp'))).toBe(false);
    // A second start finds nothing more to do.
    expect((await importDiskBlobs(t.db, blobs, dir, logger)).imported).toBe(0);
    expect(await importDiskBlobs(t.db, blobs, path.join(work, 'never-existed'), logger)).toEqual({ imported: 0, leftInPlace: [] });
  });
});
