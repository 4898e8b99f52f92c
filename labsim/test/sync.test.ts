import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LabWorld, specFromPreset } from '../src';
import { adbOn, startWorld } from './helpers';

describe('sync: push / pull / stat / ls', () => {
  let world: LabWorld;
  let adb: ReturnType<typeof adbOn>;
  let tmp: string;

  beforeAll(async () => {
    world = await startWorld();
    const d = await world.addAndroidDevice(specFromPreset('galaxy-s23', 0));
    adb = adbOn(world, d.adbSerial);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'labsim-sync-'));
  });
  afterAll(async () => {
    await world?.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('push then pull round-trips 300 KB of random bytes (multiple DATA blocks)', async () => {
    const data = randomBytes(300 * 1024 + 17);
    const src = path.join(tmp, 'blob.bin');
    fs.writeFileSync(src, data);
    const pushed = await adb('push', src, '/sdcard/Download/nested/blob.bin');
    expect(pushed.code).toBe(0);
    expect(pushed.stdout).toMatch(/1 file pushed/);
    const back = path.join(tmp, 'back.bin');
    const pulled = await adb('pull', '/sdcard/Download/nested/blob.bin', back);
    expect(pulled.code).toBe(0);
    expect(fs.readFileSync(back).equals(data)).toBe(true);
    // The shell sees the same file, through /sdcard -> /storage/emulated/0.
    expect((await adb('shell', 'wc -c < /storage/emulated/0/Download/nested/blob.bin')).stdout.trim()).toBe(String(data.length));
  });

  test('push into a directory appends the file name (STAT of the target)', async () => {
    const src = path.join(tmp, 'note.txt');
    fs.writeFileSync(src, 'hello device\n');
    expect((await adb('push', src, '/data/local/tmp/')).code).toBe(0);
    expect((await adb('shell', 'cat /data/local/tmp/note.txt')).stdout).toBe('hello device\n');
  });

  test('pull of a missing file fails like on a device', async () => {
    const r = await adb('pull', '/sdcard/nope.txt', path.join(tmp, 'x'));
    expect(r.code).toBe(1);
    // adb 29 prints this on stdout; the ENOENT comes from our STA2 reply.
    expect(r.stdout).toBe("adb: error: failed to stat remote object '/sdcard/nope.txt': No such file or directory\n");
  });

  test('adb ls lists directory entries', async () => {
    const r = await adb('ls', '/data/local/tmp');
    expect(r.stdout).toMatch(/ note\.txt$/m);
  });

  test('pull of generated /proc files', async () => {
    const dst = path.join(tmp, 'meminfo');
    expect((await adb('pull', '/proc/meminfo', dst)).code).toBe(0);
    expect(fs.readFileSync(dst, 'utf8')).toMatch(/^MemTotal:\s+7486544 kB$/m);
  });
});
