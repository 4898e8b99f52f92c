import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import fs, { type WriteStream } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AppCache, BlobDigestMismatchError } from '../../src/apps/app-cache';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('AppCache', () => {
  let dir: string;
  beforeEach(async () => { dir = await mkdtemp(path.join(os.tmpdir(), 'gw-cache-')); });
  afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

  const source = (data: Buffer, counter: { calls: number }, delayMs = 0) => () => {
    counter.calls++;
    return (async function* () {
      for (let i = 0; i < data.length; i += 1000) {
        if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
        yield data.subarray(i, i + 1000);
      }
    })();
  };

  it('downloads once, verifies, and serves later requests from disk', async () => {
    const data = Buffer.alloc(10_000, 7);
    const counter = { calls: 0 };
    const cache = new AppCache(path.join(dir, 'apps'));
    const file = await cache.ensure(sha(data), '.apk', source(data, counter));
    expect(file).toBe(path.join(dir, 'apps', `${sha(data)}.apk`));
    expect(await readFile(file)).toEqual(data);
    await cache.ensure(sha(data).toUpperCase(), '.apk', source(data, counter));
    expect(counter.calls).toBe(1);
  });

  it('shares one download between concurrent requests', async () => {
    const data = Buffer.alloc(5_000, 1);
    const counter = { calls: 0 };
    const cache = new AppCache(dir);
    const files = await Promise.all([1, 2, 3].map(() => cache.ensure(sha(data), '.apk', source(data, counter, 5))));
    expect(new Set(files).size).toBe(1);
    expect(counter.calls).toBe(1);
  });

  it('rejects content with the wrong digest and leaves no file behind', async () => {
    const data = Buffer.from('not what was promised');
    const cache = new AppCache(dir);
    const wanted = sha(Buffer.from('something else'));
    await expect(cache.ensure(wanted, '.apk', source(data, { calls: 0 }))).rejects.toBeInstanceOf(BlobDigestMismatchError);
    expect(await readdir(dir)).toEqual([]);
    expect(await cache.has(wanted, '.apk')).toBe(false);
  });

  it('cleans up after a failing source and allows a retry', async () => {
    const data = Buffer.from('payload');
    const cache = new AppCache(dir);
    const failing = () => (async function* () { yield Buffer.from('pay'); throw new Error('stream lost'); })();
    await expect(cache.ensure(sha(data), '.apk', failing)).rejects.toThrow('stream lost');
    expect(await readdir(dir)).toEqual([]);
    await expect(cache.ensure(sha(data), '.apk', source(data, { calls: 0 }))).resolves.toContain(sha(data));
  });

  it('waits for the file to drain without piling up listeners on it', async () => {
    const opened: WriteStream[] = [];
    const original = fs.createWriteStream;
    const spy = jest.spyOn(fs, 'createWriteStream').mockImplementation(((...args: Parameters<typeof original>) => {
      const stream = original(...args);
      opened.push(stream);
      return stream;
    }) as typeof original);
    try {
      // 64 KiB chunks overrun the stream's 16 KiB buffer, so every write waits for 'drain' (40 waits).
      const data = Buffer.alloc(40 * 65_536, 3);
      const chunks = () => (async function* () {
        for (let i = 0; i < data.length; i += 65_536) yield data.subarray(i, i + 65_536);
      })();
      const file = await new AppCache(dir).ensure(sha(data), '.apk', chunks);
      expect(sha(await readFile(file))).toBe(sha(data));
      expect(opened).toHaveLength(1);
      expect(opened[0].listenerCount('drain')).toBe(0);
      expect(opened[0].listenerCount('error')).toBeLessThanOrEqual(1); // the one that watches the whole write
    } finally {
      spy.mockRestore();
    }
  });

  describe('arriving', () => {
    /** A source that announces its size, sends `sent` bytes, then waits for `go` before the rest (or `rest`). */
    const gated = (data: Buffer, sent: number, go: Promise<void>, rest?: () => AsyncIterable<Buffer>) =>
      (announce: (size: number) => void) => (async function* () {
        announce(data.length);
        yield data.subarray(0, sent);
        await go;
        if (rest) yield* rest(); else yield data.subarray(sent);
      })();
    const collect = async (source: AsyncIterable<Buffer>) => {
      const pieces: Buffer[] = [];
      for await (const piece of source) pieces.push(piece);
      return Buffer.concat(pieces);
    };

    it('reads the bytes as they arrive, the last one only once verified, and keeps the file', async () => {
      const data = Buffer.alloc(100_000, 5);
      let release: () => void = () => undefined;
      const cache = new AppCache(dir);
      const app = await cache.arriving(sha(data), '.apk', gated(data, 60_000, new Promise((r) => { release = r; })));
      expect(app.size).toBe(data.length);
      const seen: number[] = [];
      const reading = (async () => {
        const pieces: Buffer[] = [];
        for await (const piece of app.read(16_384)) { pieces.push(piece); seen.push(Buffer.concat(pieces).length); }
        return Buffer.concat(pieces);
      })();
      await new Promise((r) => setTimeout(r, 200));
      expect(seen[seen.length - 1]).toBe(60_000); // what arrived so far, before the source sent the rest
      release();
      expect((await reading).equals(data)).toBe(true);
      expect(await app.complete).toBe(path.join(dir, `${sha(data)}.apk`));
      // A later reader of the same blob reads the cached file.
      expect((await collect((await cache.arriving(sha(data), '.apk', source(data, { calls: 0 }))).read(4096))).equals(data)).toBe(true);
    });

    it('fails its readers before they get every byte when the digest does not match, and keeps nothing', async () => {
      const data = Buffer.alloc(50_000, 1);
      const wrong = Buffer.from(data);
      wrong[49_999] = 2;
      const cache = new AppCache(dir);
      const app = await cache.arriving(sha(data), '.apk', gated(wrong, 50_000, Promise.resolve(), async function* () { /* nothing more */ }));
      let got = 0;
      await expect((async () => { for await (const piece of app.read(8192)) got += piece.length; })()).rejects.toBeInstanceOf(BlobDigestMismatchError);
      expect(got).toBeLessThan(data.length);
      await expect(app.complete).rejects.toBeInstanceOf(BlobDigestMismatchError);
      expect(await readdir(dir)).toEqual([]);
    });

    it('fails its readers when the source breaks midway, and a source that breaks before any byte fails at once', async () => {
      const data = Buffer.alloc(50_000, 9);
      const cache = new AppCache(dir);
      const app = await cache.arriving(sha(data), '.apk', gated(data, 20_000, Promise.resolve(), async function* () { throw new Error('stream lost'); }));
      await expect(collect(app.read(8192))).rejects.toThrow('stream lost');
      await expect(cache.arriving(sha(data), '.apk', () => (async function* () { throw new Error('no such blob'); })()))
        .rejects.toThrow('no such blob');
      expect(await readdir(dir)).toEqual([]);
    });
  });

  describe('a download cut by a killed gateway', () => {
    const register = path.join(__dirname, '..', '..', '..', 'hub', 'test', 'support', 'ts-register.cjs');
    const appCacheSource = path.join(__dirname, '..', '..', 'src', 'apps', 'app-cache.ts');
    const children: ChildProcess[] = [];
    afterEach(() => { for (const child of children.splice(0)) child.kill('SIGKILL'); });

    /** A gateway process whose cache in `cacheDir` downloads `size` bytes of `fill`: half is on disk, the rest never comes. */
    async function cutDownload(cacheDir: string, size: number, fill: number): Promise<ChildProcess> {
      const data = Buffer.alloc(size, fill);
      const script = `
        const { AppCache } = require(${JSON.stringify(appCacheSource)});
        const half = Buffer.alloc(${size / 2}, ${fill});
        new AppCache(${JSON.stringify(cacheDir)}).ensure(${JSON.stringify(sha(data))}, '.apk', () => (async function* () {
          yield half;
          await new Promise(() => setInterval(() => undefined, 1000)); // alive, as a gateway on its hub link
        })());`;
      const child = spawn(process.execPath, ['-r', register, '-e', script], { stdio: 'ignore' });
      children.push(child);
      const deadline = Date.now() + 30_000;
      for (;;) {
        const parts = (await readdir(cacheDir).catch(() => [] as string[])).filter((name) => name.startsWith(`.${sha(data)}.`));
        if (parts.length === 1 && fs.statSync(path.join(cacheDir, parts[0])).size === data.length / 2) return child;
        if (Date.now() > deadline) throw new Error('the child never wrote half of the download');
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const kill = async (child: ChildProcess) => {
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    };

    it('leaves a .part that the next cache on the folder removes; a download another process still runs is kept', async () => {
      const cut = Buffer.alloc(200_000, 4);
      const running = Buffer.alloc(100_000, 6);
      await cutDownload(dir, running.length, 6);
      await kill(await cutDownload(dir, cut.length, 4));
      const leftover = (await readdir(dir)).filter((name) => name.startsWith(`.${sha(cut)}.`));
      expect(leftover).toHaveLength(1);

      const restarted = new AppCache(dir);
      await restarted.leftoversRemoved;
      const names = await readdir(dir);
      expect(names).toHaveLength(1);
      expect(names[0]).toMatch(new RegExp(`^\\.${sha(running)}\\.\\d+\\.[0-9a-f]+\\.part$`));
      expect(await restarted.ensure(sha(cut), '.apk', source(cut, { calls: 0 }))).toBe(path.join(dir, `${sha(cut)}.apk`));
    }, 60_000);

    it('leaves a .part that a later successful download of the same app removes', async () => {
      const data = Buffer.alloc(200_000, 8);
      const cache = new AppCache(dir);
      await cache.leftoversRemoved;
      await kill(await cutDownload(dir, data.length, 8));
      expect((await readdir(dir)).filter((name) => name.endsWith('.part'))).toHaveLength(1);
      await cache.ensure(sha(data), '.apk', source(data, { calls: 0 }));
      expect(await readdir(dir)).toEqual([`${sha(data)}.apk`]);
    }, 60_000);
  });

  it('refuses addresses that are not SHA-256', () => {
    expect(() => new AppCache(dir).pathFor('../../etc/passwd', '.apk')).toThrow(/SHA-256/);
  });

  it('keeps each platform\'s file type, and refuses a type that is not one', async () => {
    const data = Buffer.from('an ipa');
    const cache = new AppCache(dir);
    await expect(cache.ensure(sha(data), '.ipa', source(data, { calls: 0 }))).resolves.toBe(path.join(dir, `${sha(data)}.ipa`));
    expect(await cache.has(sha(data), '.ipa')).toBe(true);
    expect(await cache.has(sha(data), '.apk')).toBe(false);
    expect(() => cache.pathFor(sha(data), '/../x')).toThrow(/extension/);
  });
});
