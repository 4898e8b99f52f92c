/**
 * Finds adb transport packets (AOSP `protocol.txt`: a 24-byte header of six little-endian u32, then the payload) in
 * a byte stream as it passes, without reassembling payloads: payload bytes pass on as the slices they came in.
 * The CLI ships only Node built-ins, commander, ws and bufferutil, so it does not import `@devicelab/shared`'s
 * AdbPacketReader (which also holds a whole packet before handing it on, where this passes bytes as they come).
 */

export const A_CNXN = 0x4e584e43;
export const A_OKAY = 0x59414b4f;
export const A_CLSE = 0x45534c43;
export const A_WRTE = 0x45545257;
const HEADER_BYTES = 24;

export interface AdbHeader {
  command: number;
  arg0: number;
  arg1: number;
  length: number;
}

/** The header of a packet without payload (OKAY, CLSE): data length 0, data check 0. */
export function emptyPacket(command: number, arg0: number, arg1: number): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt32LE(command >>> 0, 0);
  header.writeUInt32LE(arg0 >>> 0, 4);
  header.writeUInt32LE(arg1 >>> 0, 8);
  header.writeUInt32LE((command ^ 0xffffffff) >>> 0, 20);
  return header;
}

/**
 * `scan` cuts a chunk into what passes on. `keep` sees each header once it is whole (false drops the packet);
 * `ended` is called at each packet's end with the pieces passed so far, so that packets can be added there (only
 * between packets, never inside one). A header split across chunks is held back until it is whole. A header
 * with a wrong magic makes the scanner `broken`: from there on (held-back bytes first) everything passes as it is.
 */
export class AdbPacketScanner {
  private readonly head = Buffer.alloc(HEADER_BYTES);
  private headFill = 0;
  private payloadLeft = 0;
  private dropping = false;
  private current: AdbHeader | undefined;
  /** A header's magic was wrong: not an adb stream, and everything since passed unchanged. */
  broken = false;

  /** No packet is partly passed on: a packet may be added to the stream now. */
  get atBoundary(): boolean {
    return this.headFill === 0 && this.payloadLeft === 0;
  }

  scan(chunk: Buffer, keep: (header: AdbHeader) => boolean, ended: (header: AdbHeader, out: Buffer[]) => void): Buffer[] {
    if (this.broken) return [chunk];
    const out: Buffer[] = [];
    let runStart = 0; // start of the bytes of `chunk` not yet in `out`
    let offset = 0;
    const flush = (end: number) => {
      if (end > runStart) out.push(chunk.subarray(runStart, end));
      runStart = Math.max(runStart, end);
    };
    while (offset < chunk.length) {
      if (this.payloadLeft > 0) {
        const n = Math.min(this.payloadLeft, chunk.length - offset);
        if (this.dropping) {
          flush(offset);
          runStart = offset + n;
        }
        offset += n;
        this.payloadLeft -= n;
        if (this.payloadLeft === 0) this.finish(offset, flush, out, ended);
        continue;
      }
      const headerStart = offset;
      const split = this.headFill > 0; // this header began in an earlier chunk
      const n = Math.min(HEADER_BYTES - this.headFill, chunk.length - offset);
      chunk.copy(this.head, this.headFill, offset, offset + n);
      this.headFill += n;
      offset += n;
      if (this.headFill < HEADER_BYTES) {
        flush(headerStart);
        runStart = chunk.length; // held back until whole
        break;
      }
      this.headFill = 0;
      const header = {
        command: this.head.readUInt32LE(0), arg0: this.head.readUInt32LE(4), arg1: this.head.readUInt32LE(8), length: this.head.readUInt32LE(12),
      };
      if (((header.command ^ 0xffffffff) >>> 0) !== this.head.readUInt32LE(20)) {
        // Not adb: everything from here on passes as it is, the bytes held back first.
        this.broken = true;
        flush(headerStart);
        if (split) out.push(Buffer.from(this.head.subarray(0, HEADER_BYTES - (offset - headerStart))));
        out.push(chunk.subarray(headerStart));
        return out;
      }
      this.current = header;
      this.payloadLeft = header.length;
      this.dropping = !keep(header);
      if (split) {
        // Its first bytes were held back: pass the whole header on as one piece.
        flush(headerStart);
        if (!this.dropping) out.push(Buffer.from(this.head));
        runStart = offset;
      } else if (this.dropping) {
        flush(headerStart);
        runStart = offset;
      }
      if (this.payloadLeft === 0) this.finish(offset, flush, out, ended);
    }
    flush(chunk.length);
    return out;
  }

  private finish(offset: number, flush: (end: number) => void, out: Buffer[], ended: (header: AdbHeader, out: Buffer[]) => void): void {
    const header = this.current!;
    this.current = undefined;
    this.dropping = false;
    flush(offset);
    ended(header, out);
  }
}
