/**
 * ADB transport packet codec.
 *
 * Every packet is a 24-byte header of six little-endian u32 values
 * (command, arg0, arg1, data_length, data_check, magic) followed by
 * data_length payload bytes. magic = command ^ 0xffffffff.
 *
 * data_check is a plain byte sum. Hosts at protocol version >= 0x01000001
 * send 0 there, so the parser accepts 0 as well as a correct sum; we always
 * send a correct sum because older hosts verify it.
 */

export const A_CNXN = 0x4e584e43;
export const A_AUTH = 0x48545541;
export const A_OPEN = 0x4e45504f;
export const A_OKAY = 0x59414b4f;
export const A_CLSE = 0x45534c43;
export const A_WRTE = 0x45545257;
const A_SYNC = 0x434e5953;
const A_STLS = 0x534c5453;

/** Protocol version we speak: "skip checksum" capable. */
export const A_VERSION = 0x01000001;
/** Largest payload we accept from the host (the real adbd's MAX_PAYLOAD). */
export const MAX_PAYLOAD = 1024 * 1024;

export const AUTH_TOKEN = 1;
export const AUTH_SIGNATURE = 2;
export const AUTH_RSAPUBLICKEY = 3;

const HEADER_SIZE = 24;

export interface AdbPacket {
  command: number;
  arg0: number;
  arg1: number;
  data: Buffer;
}

const NAMES: Record<number, string> = {
  [A_CNXN]: 'CNXN',
  [A_AUTH]: 'AUTH',
  [A_OPEN]: 'OPEN',
  [A_OKAY]: 'OKAY',
  [A_CLSE]: 'CLSE',
  [A_WRTE]: 'WRTE',
  [A_SYNC]: 'SYNC',
  [A_STLS]: 'STLS',
};

function commandName(command: number): string {
  return NAMES[command] ?? `0x${command.toString(16)}`;
}

function checksum(data: Buffer): number {
  let sum = 0;
  for (let i = 0; i < data.length; i++) sum = (sum + data[i]) >>> 0;
  return sum;
}

export function encodePacket(command: number, arg0: number, arg1: number, data: Buffer = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(HEADER_SIZE);
  header.writeUInt32LE(command >>> 0, 0);
  header.writeUInt32LE(arg0 >>> 0, 4);
  header.writeUInt32LE(arg1 >>> 0, 8);
  header.writeUInt32LE(data.length, 12);
  header.writeUInt32LE(checksum(data), 16);
  header.writeUInt32LE((command ^ 0xffffffff) >>> 0, 20);
  return data.length ? Buffer.concat([header, data]) : header;
}

class PacketError extends Error {}

/**
 * Incremental parser: TCP delivers arbitrary slices of the packet stream,
 * so bytes are accumulated until a full header + payload is available.
 */
export class PacketParser {
  private pending: Buffer[] = [];
  private pendingLength = 0;

  constructor(private readonly maxPayload = MAX_PAYLOAD) {}

  /** Feeds bytes; returns every packet completed by them. Throws PacketError on a corrupt stream. */
  push(chunk: Buffer): AdbPacket[] {
    this.pending.push(chunk);
    this.pendingLength += chunk.length;
    const out: AdbPacket[] = [];
    for (;;) {
      if (this.pendingLength < HEADER_SIZE) break;
      const buf = this.flatten();
      const command = buf.readUInt32LE(0);
      const length = buf.readUInt32LE(12);
      const magic = buf.readUInt32LE(20);
      if (((command ^ 0xffffffff) >>> 0) !== magic) {
        throw new PacketError(`bad magic for command 0x${command.toString(16)}`);
      }
      if (length > this.maxPayload) throw new PacketError(`payload too large: ${length}`);
      if (buf.length < HEADER_SIZE + length) break;
      const data = Buffer.from(buf.subarray(HEADER_SIZE, HEADER_SIZE + length));
      const check = buf.readUInt32LE(16);
      if (check !== 0 && check !== checksum(data)) {
        throw new PacketError(`bad checksum for ${commandName(command)}`);
      }
      out.push({ command, arg0: buf.readUInt32LE(4), arg1: buf.readUInt32LE(8), data });
      this.consume(HEADER_SIZE + length);
    }
    return out;
  }

  private flatten(): Buffer {
    if (this.pending.length > 1) this.pending = [Buffer.concat(this.pending)];
    return this.pending[0];
  }

  private consume(n: number): void {
    const rest = this.flatten().subarray(n);
    this.pending = rest.length ? [rest] : [];
    this.pendingLength = rest.length;
  }
}
