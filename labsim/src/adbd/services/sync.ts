/**
 * `sync:` service (file transfer: adb push/pull/ls and the legacy install).
 *
 * The sync protocol is a byte stream layered on the ADB stream: request
 * boundaries do NOT line up with WRTE packets (an 8-byte DATA header may
 * arrive alone, one WRTE may carry several DATA blocks), so requests are
 * parsed from an accumulating buffer.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AdbStream } from '../stream';
import type { DevicePort } from '../device-port';

/** Largest DATA block either side may send (SYNC_DATA_MAX). */
const SYNC_DATA_MAX = 64 * 1024;

const S_IFLNK = 0o120000;

type SendState = { devicePath: string; mode: number; chunks: Buffer[] };

export function startSyncService(stream: AdbStream, device: DevicePort): void {
  new SyncSession(stream, device);
}

class SyncSession {
  private buf: Buffer = Buffer.alloc(0);
  private send: SendState | null = null;

  constructor(private readonly stream: AdbStream, private readonly device: DevicePort) {
    stream.on('data', (d: Buffer) => {
      this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
      this.drain();
    });
  }

  private drain(): void {
    while (!this.stream.closed && this.buf.length >= 8) {
      const id = this.buf.toString('latin1', 0, 4);
      const arg = this.buf.readUInt32LE(4);
      // DONE carries an mtime, QUIT nothing; every other request carries `arg` bytes.
      const bodyLength = id === 'DONE' || id === 'QUIT' ? 0 : arg;
      if (bodyLength > SYNC_DATA_MAX * 2) return this.fail(`request too large: ${bodyLength}`);
      if (this.buf.length < 8 + bodyLength) return;
      const body = this.buf.subarray(8, 8 + bodyLength);
      this.buf = this.buf.subarray(8 + bodyLength);
      this.handle(id, arg, body);
    }
  }

  private handle(id: string, arg: number, body: Buffer): void {
    if (this.send) {
      if (id === 'DATA') this.send.chunks.push(Buffer.from(body));
      else if (id === 'DONE') this.finishSend(arg);
      else this.fail(`unexpected ${id} during SEND`);
      return;
    }
    const devicePath = body.toString('utf8');
    switch (id) {
      case 'STAT':
        return this.statV1(devicePath);
      case 'STA2':
        return this.statV2('STA2', devicePath, false);
      case 'LST2':
        return this.statV2('LST2', devicePath, true);
      case 'LIST':
        return this.list(devicePath, false);
      case 'LIS2':
        return this.list(devicePath, true);
      case 'SEND':
        return this.beginSend(devicePath);
      case 'RECV':
        return this.recv(devicePath);
      case 'QUIT':
        return this.stream.end();
      default:
        return this.fail(`unknown sync request ${JSON.stringify(id)}`);
    }
  }

  private fail(message: string): void {
    const msg = Buffer.from(message);
    const header = Buffer.alloc(8);
    header.write('FAIL', 0, 'latin1');
    header.writeUInt32LE(msg.length, 4);
    this.stream.write(Buffer.concat([header, msg]));
  }

  private statV1(devicePath: string): void {
    const out = Buffer.alloc(16);
    out.write('STAT', 0, 'latin1');
    try {
      const st = fs.statSync(this.device.hostPath(devicePath));
      out.writeUInt32LE(st.mode >>> 0, 4);
      out.writeUInt32LE(Math.min(st.size, 0xffffffff), 8);
      out.writeUInt32LE(Math.floor(st.mtimeMs / 1000), 12);
    } catch {
      // v1 STAT signals "missing" with an all-zero reply.
    }
    this.stream.write(out);
  }

  private statV2(id: 'STA2' | 'LST2', devicePath: string, lstat: boolean): void {
    const out = Buffer.alloc(72);
    out.write(id, 0, 'latin1');
    try {
      const hostPath = this.device.hostPath(devicePath, !lstat);
      writeStat2(out, 4, lstat ? fs.lstatSync(hostPath) : fs.statSync(hostPath));
    } catch (e) {
      out.writeUInt32LE(errnoOf(e), 4);
    }
    this.stream.write(out);
  }

  private list(devicePath: string, v2: boolean): void {
    let hostDir = '';
    let names: string[] = [];
    try {
      hostDir = this.device.hostPath(devicePath);
      names = ['.', '..', ...fs.readdirSync(hostDir)];
    } catch {
      names = [];
    }
    const parts: Buffer[] = [];
    for (const name of names) {
      let st: fs.Stats;
      try {
        st = fs.lstatSync(path.join(hostDir, name));
      } catch {
        continue;
      }
      const nameBuf = Buffer.from(name);
      if (v2) {
        const entry = Buffer.alloc(76);
        entry.write('DNT2', 0, 'latin1');
        writeStat2(entry, 4, st);
        entry.writeUInt32LE(nameBuf.length, 72);
        parts.push(entry, nameBuf);
      } else {
        const entry = Buffer.alloc(20);
        entry.write('DENT', 0, 'latin1');
        entry.writeUInt32LE(st.mode >>> 0, 4);
        entry.writeUInt32LE(Math.min(st.size, 0xffffffff), 8);
        entry.writeUInt32LE(Math.floor(st.mtimeMs / 1000), 12);
        entry.writeUInt32LE(nameBuf.length, 16);
        parts.push(entry, nameBuf);
      }
    }
    const done = Buffer.alloc(v2 ? 76 : 20);
    done.write('DONE', 0, 'latin1');
    parts.push(done);
    this.stream.write(Buffer.concat(parts));
  }

  private beginSend(spec: string): void {
    // "<path>,<mode>"; the path itself may contain commas, the mode never does.
    const comma = spec.lastIndexOf(',');
    const devicePath = comma < 0 ? spec : spec.slice(0, comma);
    const mode = comma < 0 ? 0o100644 : Number(spec.slice(comma + 1));
    this.send = { devicePath, mode, chunks: [] };
  }

  private finishSend(mtime: number): void {
    const send = this.send!;
    this.send = null;
    try {
      const link = (send.mode & 0o170000) === S_IFLNK;
      // Resolved now, in the same synchronous step as the write: the tree may have changed while the data came.
      const hostPath = this.device.writableHostPath(send.devicePath, !link);
      // Like adbd with fixed_push_mkdir: create missing parent directories.
      fs.mkdirSync(path.dirname(hostPath), { recursive: true });
      const data = Buffer.concat(send.chunks);
      if (link) {
        fs.rmSync(hostPath, { force: true });
        fs.symlinkSync(data.toString('utf8'), hostPath);
      } else {
        fs.writeFileSync(hostPath, data, { mode: send.mode & 0o777 });
        fs.chmodSync(hostPath, send.mode & 0o777);
        if (mtime > 0) fs.utimesSync(hostPath, mtime, mtime);
      }
      const okay = Buffer.alloc(8);
      okay.write('OKAY', 0, 'latin1');
      this.stream.write(okay);
    } catch (e) {
      this.fail(`couldn't create file: ${(e as Error).message.replace(/^[A-Z]+: /, '').replace(/, \w+ '.*$/, '')}`);
    }
  }

  private recv(devicePath: string): void {
    let data: Buffer;
    try {
      data = fs.readFileSync(this.device.hostPath(devicePath));
    } catch (e) {
      const code = errnoOf(e);
      return this.fail(code === 2 ? 'No such file or directory' : code === 21 ? 'Is a directory' : 'Permission denied');
    }
    const parts: Buffer[] = [];
    for (let off = 0; off < data.length; off += SYNC_DATA_MAX) {
      const chunk = data.subarray(off, off + SYNC_DATA_MAX);
      const header = Buffer.alloc(8);
      header.write('DATA', 0, 'latin1');
      header.writeUInt32LE(chunk.length, 4);
      parts.push(header, chunk);
    }
    const done = Buffer.alloc(8);
    done.write('DONE', 0, 'latin1');
    parts.push(done);
    this.stream.write(Buffer.concat(parts));
  }
}

/** Writes the 68-byte stat_v2 struct (error, dev, ino, mode, nlink, uid, gid, size, atime, mtime, ctime). */
function writeStat2(out: Buffer, offset: number, st: fs.Stats): void {
  out.writeUInt32LE(0, offset);
  out.writeBigUInt64LE(BigInt(st.dev), offset + 4);
  out.writeBigUInt64LE(BigInt(st.ino), offset + 12);
  out.writeUInt32LE(st.mode >>> 0, offset + 20);
  out.writeUInt32LE(st.nlink, offset + 24);
  // Files pushed over adb belong to the shell user on a real device.
  out.writeUInt32LE(2000, offset + 28);
  out.writeUInt32LE(2000, offset + 32);
  out.writeBigUInt64LE(BigInt(st.size), offset + 36);
  out.writeBigInt64LE(BigInt(Math.floor(st.atimeMs / 1000)), offset + 44);
  out.writeBigInt64LE(BigInt(Math.floor(st.mtimeMs / 1000)), offset + 52);
  out.writeBigInt64LE(BigInt(Math.floor(st.ctimeMs / 1000)), offset + 60);
}

function errnoOf(e: unknown): number {
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'ENOENT' ? 2 : code === 'ENOTDIR' ? 20 : code === 'EISDIR' ? 21 : 13;
}
