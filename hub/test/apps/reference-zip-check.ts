/**
 * An independent opinion on whether an archive is intact, to judge the hub's verdicts by: Debian's `unzip -t`
 * when it is installed, else a plain reading written here (every central entry's local data inflated with zlib
 * in one go and its CRC compared), which shares no code with the hub's zip reader.
 */
import { spawnSync } from 'node:child_process';
import { crc32, inflateRawSync } from 'node:zlib';

const unzipInstalled = spawnSync('unzip', ['-v'], { stdio: 'ignore' }).status === 0;

export const referenceName = unzipInstalled ? 'unzip -t' : 'the test reference reader';

export function archiveIsIntact(file: string, bytes: Buffer): boolean {
  if (unzipInstalled) return spawnSync('unzip', ['-tqq', file], { stdio: 'ignore' }).status === 0;
  try {
    const eocd = bytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    if (eocd < 0) return false;
    const count = bytes.readUInt16LE(eocd + 10);
    let p = bytes.readUInt32LE(eocd + 16);
    for (let i = 0; i < count; i++) {
      if (bytes.readUInt32LE(p) !== 0x02014b50) return false;
      const [method, crc, compressed, size] = [bytes.readUInt16LE(p + 10), bytes.readUInt32LE(p + 16),
        bytes.readUInt32LE(p + 20), bytes.readUInt32LE(p + 24)];
      const local = bytes.readUInt32LE(p + 42);
      if (bytes.readUInt32LE(local) !== 0x04034b50) return false;
      const start = local + 30 + bytes.readUInt16LE(local + 26) + bytes.readUInt16LE(local + 28);
      if (start + compressed > bytes.length) return false;
      const raw = bytes.subarray(start, start + compressed);
      const data = method === 0 ? raw : method === 8 ? inflateRawSync(raw, { maxOutputLength: size + 1 }) : undefined;
      if (!data || data.length !== size || (crc32(data) >>> 0) !== crc) return false;
      p += 46 + bytes.readUInt16LE(p + 28) + bytes.readUInt16LE(p + 30) + bytes.readUInt16LE(p + 32);
    }
    return true;
  } catch {
    return false;
  }
}
