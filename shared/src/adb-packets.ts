/**
 * adb transport packets (AOSP `packages/modules/adb/protocol.txt`): a 24-byte header of six little-endian u32
 * (command, arg0, arg1, data length, data check, magic = command ^ 0xffffffff) and the payload. The check is a
 * byte sum; peers at protocol version >= 0x01000001 ("skip checksum") send 0 and do not verify it.
 * Used by the gateway's adb endpoint (the adbd side of `adb connect <gateway>:<port>`).
 */

export const A_CNXN = 0x4e584e43;
export const A_AUTH = 0x48545541;
export const A_OPEN = 0x4e45504f;
export const A_OKAY = 0x59414b4f;
export const A_CLSE = 0x45534c43;
export const A_WRTE = 0x45545257;

/** The protocol version that no longer needs the data check. */
export const A_VERSION_SKIP_CHECKSUM = 0x01000001;

export const AUTH_TOKEN = 1;
export const AUTH_SIGNATURE = 2;
export const AUTH_RSAPUBLICKEY = 3;

export const ADB_PACKET_HEADER_BYTES = 24;

export interface AdbPacket {
  command: number;
  arg0: number;
  arg1: number;
  data: Buffer;
  /**
   * From a reader with `wholeWrites` false, a WRTE's payload as the slices of the chunks it came in (`data` joins
   * them only when read): a relay writes them on without copying a megabyte per packet.
   */
  pieces?: readonly Buffer[];
}

export class AdbPacketError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdbPacketError';
  }
}

export function adbChecksum(data: Buffer): number {
  let sum = 0;
  for (let i = 0; i < data.length; i++) sum = (sum + data[i]) >>> 0;
  return sum;
}

/** The header for `data` (written separately, so the payload is not copied); `check` false sends 0. */
export function adbPacketHeader(command: number, arg0: number, arg1: number, data: Buffer | undefined, check: boolean): Buffer {
  const header = Buffer.allocUnsafe(ADB_PACKET_HEADER_BYTES);
  header.writeUInt32LE(command >>> 0, 0);
  header.writeUInt32LE(arg0 >>> 0, 4);
  header.writeUInt32LE(arg1 >>> 0, 8);
  header.writeUInt32LE(data?.length ?? 0, 12);
  header.writeUInt32LE(check && data ? adbChecksum(data) : 0, 16);
  header.writeUInt32LE((command ^ 0xffffffff) >>> 0, 20);
  return header;
}

/** Bytes as they came in chunks; `take` copies only when a slice spans chunks. */
export class ByteQueue {
  private chunks: Buffer[] = [];
  private bytes = 0;

  get length(): number {
    return this.bytes;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.bytes += chunk.length;
  }

  /** The first `bytes` bytes (at most `length`) as the slices of the chunks they came in (no copy), removed. */
  takePieces(bytes: number): Buffer[] {
    const pieces: Buffer[] = [];
    this.bytes -= bytes;
    while (bytes > 0) {
      const chunk = this.chunks[0];
      if (chunk.length <= bytes) {
        pieces.push(chunk);
        this.chunks.shift();
        bytes -= chunk.length;
      } else {
        pieces.push(chunk.subarray(0, bytes));
        this.chunks[0] = chunk.subarray(bytes);
        bytes = 0;
      }
    }
    return pieces;
  }

  /** The first `bytes` bytes (at most `length`), removed from the queue: copied only when they span chunks. */
  take(bytes: number): Buffer {
    return joined(this.takePieces(bytes));
  }

  clear(): void {
    this.chunks = [];
    this.bytes = 0;
  }
}

/**
 * Incremental reader: TCP delivers arbitrary slices of the packet stream. Chunks are kept as they came and a
 * payload is copied once, when it is complete (never re-concatenated per chunk). A header announcing more than
 * `maxPayload` bytes, a wrong magic or a wrong non-zero check is an AdbPacketError.
 */
export class AdbPacketReader {
  private readonly pending = new ByteQueue();
  private header: Omit<AdbPacket, 'data'> & { length: number; check: number } | undefined;

  /** `wholeWrites` false: WRTE payloads come as `pieces`. */
  constructor(public maxPayload: number, private readonly wholeWrites = true) {}

  push(chunk: Buffer): AdbPacket[] {
    this.pending.push(chunk);
    const packets: AdbPacket[] = [];
    for (;;) {
      if (!this.header) {
        if (this.pending.length < ADB_PACKET_HEADER_BYTES) break;
        const head = this.pending.take(ADB_PACKET_HEADER_BYTES);
        const command = head.readUInt32LE(0);
        const length = head.readUInt32LE(12);
        if (((command ^ 0xffffffff) >>> 0) !== head.readUInt32LE(20)) throw new AdbPacketError(`bad magic for command 0x${command.toString(16)}`);
        if (length > this.maxPayload) throw new AdbPacketError(`payload of ${length} bytes is over ${this.maxPayload}`);
        this.header = { command, arg0: head.readUInt32LE(4), arg1: head.readUInt32LE(8), length, check: head.readUInt32LE(16) };
      }
      if (this.pending.length < this.header.length) break;
      const { command, arg0, arg1, length, check } = this.header;
      this.header = undefined;
      const pieces = this.pending.takePieces(length);
      if (check !== 0 && check !== pieces.reduce((sum, piece) => (sum + adbChecksum(piece)) >>> 0, 0)) {
        throw new AdbPacketError(`bad data check for command 0x${command.toString(16)}`);
      }
      packets.push(!this.wholeWrites && command === A_WRTE
        ? piecewisePacket(command, arg0, arg1, pieces) : { command, arg0, arg1, data: joined(pieces) });
    }
    return packets;
  }
}

function piecewisePacket(command: number, arg0: number, arg1: number, pieces: Buffer[]): AdbPacket {
  let data: Buffer | undefined;
  return {
    command, arg0, arg1, pieces,
    get data() {
      data ??= joined(pieces);
      return data;
    },
  };
}

/** Slices as one buffer: the slice itself when there is one, a copy only when there are several. */
function joined(pieces: Buffer[]): Buffer {
  return pieces.length === 1 ? pieces[0] : Buffer.concat(pieces);
}
