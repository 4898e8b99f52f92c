/**
 * com.apple.afc: the media file service (what ideviceinstaller uploads an IPA to `PublicStaging/` with).
 * Packets: 40-byte header "CFA6LPAA", entire length, header length, packet number, operation (u64 LE), then the
 * header payload (paths, handles) and data (file bytes). Answers: STATUS (u64 error code), DATA, FILE_OPEN_RES.
 * Paths are relative to /private/var/mobile/Media and never leave it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SimIosDevice } from '../device';
import type { ByteLink } from '../plist-channel';

const MAGIC = Buffer.from('CFA6LPAA', 'latin1');
const HEADER = 40;
const MAX_PACKET = 64 * 1024 * 1024;

const Op = {
  STATUS: 0x01, DATA: 0x02, READ_DIR: 0x03, REMOVE_PATH: 0x08, MAKE_DIR: 0x09, GET_FILE_INFO: 0x0a, GET_DEVINFO: 0x0b,
  FILE_OPEN: 0x0d, FILE_OPEN_RES: 0x0e, FILE_READ: 0x0f, FILE_WRITE: 0x10, FILE_SEEK: 0x11, FILE_TELL: 0x12,
  FILE_TELL_RES: 0x13, FILE_CLOSE: 0x14, FILE_SET_SIZE: 0x15, RENAME_PATH: 0x18, REMOVE_PATH_AND_CONTENTS: 0x22,
} as const;

const AfcError = {
  SUCCESS: 0, UNKNOWN_ERROR: 1, UNKNOWN_PACKET_TYPE: 6, INVALID_ARG: 7, OBJECT_NOT_FOUND: 8, OBJECT_IS_DIR: 9,
  PERM_DENIED: 10, OBJECT_EXISTS: 16, DIR_NOT_EMPTY: 33,
} as const;

/** AFC_FOPEN_* modes to node flags. */
const OPEN_FLAGS: Record<number, string> = { 1: 'r', 2: 'r+', 3: 'w', 4: 'w+', 5: 'a', 6: 'a+' };

class AfcFailure extends Error {
  constructor(readonly code: number) {
    super(`AFC error ${code}`);
  }
}

export function serveAfc(device: SimIosDevice, link: ByteLink): void {
  const root = device.mediaRoot;
  const handles = new Map<number, { fd: number; position: number }>();
  let nextHandle = 1;
  let pending: Buffer = Buffer.alloc(0);

  const reply = (packetNum: bigint, operation: number, headerPayload: Buffer, data: Buffer = Buffer.alloc(0)): void => {
    const header = Buffer.alloc(HEADER);
    MAGIC.copy(header, 0);
    header.writeBigUInt64LE(BigInt(HEADER + headerPayload.length + data.length), 8);
    header.writeBigUInt64LE(BigInt(HEADER + headerPayload.length), 16);
    header.writeBigUInt64LE(packetNum, 24);
    header.writeBigUInt64LE(BigInt(operation), 32);
    link.write(Buffer.concat([header, headerPayload, data]));
  };
  const u64 = (v: number): Buffer => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    return b;
  };

  const resolvePath = (raw: Buffer): string => {
    const end = raw.indexOf(0);
    const afcPath = raw.toString('utf8', 0, end < 0 ? raw.length : end);
    const full = path.resolve(root, `./${path.posix.normalize(`/${afcPath}`)}`);
    if (full !== root && !full.startsWith(root + path.sep)) throw new AfcFailure(AfcError.PERM_DENIED);
    return full;
  };
  const handle = (payload: Buffer): { fd: number; position: number } => {
    const h = handles.get(Number(payload.readBigUInt64LE(0)));
    if (!h) throw new AfcFailure(AfcError.INVALID_ARG);
    return h;
  };
  const fsCall = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new AfcFailure(
        code === 'ENOENT' ? AfcError.OBJECT_NOT_FOUND : code === 'EEXIST' ? AfcError.OBJECT_EXISTS : code === 'ENOTEMPTY' ? AfcError.DIR_NOT_EMPTY
          : code === 'EISDIR' ? AfcError.OBJECT_IS_DIR : AfcError.UNKNOWN_ERROR,
      );
    }
  };
  const keyValues = (pairs: Record<string, string | number>): Buffer =>
    Buffer.from(Object.entries(pairs).map(([k, v]) => `${k}\0${v}\0`).join(''), 'utf8');

  const dispatch = (packetNum: bigint, operation: number, body: Buffer): void => {
    const status = (code: number): void => reply(packetNum, Op.STATUS, u64(code));
    switch (operation) {
      case Op.READ_DIR: {
        const names = fsCall(() => fs.readdirSync(resolvePath(body)));
        return reply(packetNum, Op.DATA, Buffer.alloc(0), Buffer.from(['.', '..', ...names].map((n) => `${n}\0`).join(''), 'utf8'));
      }
      case Op.GET_FILE_INFO: {
        const st = fsCall(() => fs.lstatSync(resolvePath(body), { bigint: true }));
        return reply(packetNum, Op.DATA, Buffer.alloc(0), keyValues({
          st_size: String(st.size), st_blocks: String(st.blocks), st_nlink: String(st.nlink),
          st_ifmt: st.isDirectory() ? 'S_IFDIR' : st.isSymbolicLink() ? 'S_IFLNK' : 'S_IFREG',
          st_mtime: String(st.mtimeNs), st_birthtime: String(st.birthtimeNs),
        }));
      }
      case Op.GET_DEVINFO: {
        const disk = device.lockdownValue('com.apple.disk_usage', undefined, true) as Record<string, number>;
        return reply(packetNum, Op.DATA, Buffer.alloc(0), keyValues({
          Model: device.spec.productType, FSTotalBytes: disk.TotalDataCapacity, FSFreeBytes: disk.AmountDataAvailable, FSBlockSize: 4096,
        }));
      }
      case Op.MAKE_DIR:
        fsCall(() => fs.mkdirSync(resolvePath(body), { recursive: true }));
        return status(AfcError.SUCCESS);
      case Op.REMOVE_PATH: {
        const target = resolvePath(body);
        if (target === root) throw new AfcFailure(AfcError.PERM_DENIED);
        fsCall(() => (fs.lstatSync(target).isDirectory() ? fs.rmdirSync(target) : fs.unlinkSync(target)));
        return status(AfcError.SUCCESS);
      }
      case Op.REMOVE_PATH_AND_CONTENTS: {
        const target = resolvePath(body);
        if (target === root) throw new AfcFailure(AfcError.PERM_DENIED);
        fsCall(() => fs.lstatSync(target));
        fs.rmSync(target, { recursive: true, force: true });
        return status(AfcError.SUCCESS);
      }
      case Op.RENAME_PATH: {
        const split = body.indexOf(0);
        if (split < 0) throw new AfcFailure(AfcError.INVALID_ARG);
        const from = resolvePath(body.subarray(0, split));
        const to = resolvePath(body.subarray(split + 1));
        fsCall(() => fs.renameSync(from, to));
        return status(AfcError.SUCCESS);
      }
      case Op.FILE_OPEN: {
        const flags = OPEN_FLAGS[Number(body.readBigUInt64LE(0))];
        if (!flags) throw new AfcFailure(AfcError.INVALID_ARG);
        const target = resolvePath(body.subarray(8));
        const fd = fsCall(() => fs.openSync(target, flags));
        const id = nextHandle++;
        handles.set(id, { fd, position: flags.startsWith('a') ? fs.fstatSync(fd).size : 0 });
        return reply(packetNum, Op.FILE_OPEN_RES, u64(id));
      }
      case Op.FILE_READ: {
        const h = handle(body);
        const wanted = Math.min(Number(body.readBigUInt64LE(8)), 4 * 1024 * 1024);
        const out = Buffer.alloc(wanted);
        const n = fsCall(() => fs.readSync(h.fd, out, 0, wanted, h.position));
        h.position += n;
        return reply(packetNum, Op.DATA, Buffer.alloc(0), out.subarray(0, n));
      }
      case Op.FILE_WRITE: {
        const h = handle(body);
        const data = body.subarray(8);
        fsCall(() => fs.writeSync(h.fd, data, 0, data.length, h.position));
        h.position += data.length;
        return status(AfcError.SUCCESS);
      }
      case Op.FILE_SEEK: {
        const h = handle(body);
        const whence = Number(body.readBigUInt64LE(8));
        const offset = Number(body.readBigInt64LE(16));
        const base = whence === 0 ? 0 : whence === 1 ? h.position : fs.fstatSync(h.fd).size;
        if (base + offset < 0) throw new AfcFailure(AfcError.INVALID_ARG);
        h.position = base + offset;
        return status(AfcError.SUCCESS);
      }
      case Op.FILE_TELL:
        return reply(packetNum, Op.FILE_TELL_RES, u64(handle(body).position));
      case Op.FILE_SET_SIZE: {
        const h = handle(body);
        fsCall(() => fs.ftruncateSync(h.fd, Number(body.readBigUInt64LE(8))));
        return status(AfcError.SUCCESS);
      }
      case Op.FILE_CLOSE: {
        const id = Number(body.readBigUInt64LE(0));
        const h = handle(body);
        handles.delete(id);
        fs.closeSync(h.fd);
        return status(AfcError.SUCCESS);
      }
      default:
        return status(AfcError.UNKNOWN_PACKET_TYPE);
    }
  };

  link.on('data', (chunk: Buffer) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= HEADER) {
      if (!pending.subarray(0, 8).equals(MAGIC)) return link.destroy();
      const entire = Number(pending.readBigUInt64LE(8));
      const thisLength = Number(pending.readBigUInt64LE(16));
      if (entire < HEADER || thisLength < HEADER || thisLength > entire || entire > MAX_PACKET) return link.destroy();
      if (pending.length < entire) return;
      const packetNum = pending.readBigUInt64LE(24);
      const operation = Number(pending.readBigUInt64LE(32));
      const body = pending.subarray(HEADER, entire);
      pending = pending.subarray(entire);
      try {
        if (body.length < minimumBody(operation)) throw new AfcFailure(AfcError.INVALID_ARG);
        dispatch(packetNum, operation, body);
      } catch (e) {
        reply(packetNum, Op.STATUS, u64(e instanceof AfcFailure ? e.code : AfcError.UNKNOWN_ERROR));
      }
    }
  });
  link.on('close', () => {
    for (const h of handles.values()) fs.closeSync(h.fd);
    handles.clear();
  });
}

/** Bytes an operation's payload must have before it can be read (handles, modes, lengths). */
function minimumBody(operation: number): number {
  switch (operation) {
    case Op.FILE_OPEN: case Op.FILE_WRITE: case Op.FILE_TELL: case Op.FILE_CLOSE:
      return 8;
    case Op.FILE_READ: case Op.FILE_SET_SIZE:
      return 16;
    case Op.FILE_SEEK:
      return 24;
    default:
      return 0;
  }
}
