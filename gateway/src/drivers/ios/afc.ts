/**
 * com.apple.afc, just what an install needs: make `PublicStaging`, write one file into it. Packets: 40-byte header
 * "CFA6LPAA", entire length, header length, packet number, operation (u64 LE each), header payload, data.
 */
import { once } from 'node:events';
import { open } from 'node:fs/promises';
import type * as net from 'node:net';
import { DeviceCommandError } from '../device-driver';

const MAGIC = Buffer.from('CFA6LPAA', 'latin1');
const HEADER = 40;
const Op = { STATUS: 0x01, DATA: 0x02, MAKE_DIR: 0x09, FILE_OPEN: 0x0d, FILE_OPEN_RES: 0x0e, FILE_WRITE: 0x10, FILE_CLOSE: 0x14 } as const;
const WRITE_ONLY_TRUNCATE = 3;
const CHUNK = 1024 * 1024;

const u64 = (value: number | bigint): Buffer => {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64LE(BigInt(value));
  return bytes;
};
const cString = (text: string): Buffer => Buffer.from(`${text}\0`, 'utf8');

export class AfcClient {
  private packet = 0n;
  private pending: Buffer = Buffer.alloc(0);
  private readonly answers: Array<{ operation: number; payload: Buffer }> = [];
  private waiter: (() => void) | undefined;
  private closed = false;

  constructor(private readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.pending = Buffer.concat([this.pending, chunk]);
      while (this.pending.length >= HEADER) {
        const length = Number(this.pending.readBigUInt64LE(8));
        if (this.pending.length < length) break;
        this.answers.push({ operation: Number(this.pending.readBigUInt64LE(32)), payload: this.pending.subarray(HEADER, length) });
        this.pending = this.pending.subarray(length);
      }
      this.waiter?.();
    });
    socket.on('close', () => { this.closed = true; this.waiter?.(); });
    socket.on('error', () => undefined);
  }

  private async call(operation: number, header: Buffer, data: Buffer = Buffer.alloc(0)): Promise<{ operation: number; payload: Buffer }> {
    const head = Buffer.alloc(HEADER);
    MAGIC.copy(head, 0);
    head.writeBigUInt64LE(BigInt(HEADER + header.length + data.length), 8);
    head.writeBigUInt64LE(BigInt(HEADER + header.length), 16);
    head.writeBigUInt64LE(this.packet++, 24);
    head.writeBigUInt64LE(BigInt(operation), 32);
    this.socket.write(Buffer.concat([head, header, data]));
    while (!this.answers.length) {
      if (this.closed) throw new DeviceCommandError('The device closed its file service (AFC) during the upload', 'DEVICE_UNREACHABLE');
      await new Promise<void>((resolve) => { this.waiter = resolve; });
    }
    const answer = this.answers.shift()!;
    if (answer.operation === Op.STATUS) {
      const code = Number(answer.payload.readBigUInt64LE(0));
      if (code !== 0) throw new DeviceCommandError(`The device's file service (AFC) refused the upload (error ${code})`, 'AFC_ERROR');
    }
    return answer;
  }

  async makeDirectory(path: string): Promise<void> {
    await this.call(Op.MAKE_DIR, cString(path));
  }

  /** Copies a local file to `path` on the device. */
  async upload(localPath: string, path: string): Promise<void> {
    const opened = await this.call(Op.FILE_OPEN, Buffer.concat([u64(WRITE_ONLY_TRUNCATE), cString(path)]));
    if (opened.operation !== Op.FILE_OPEN_RES) throw new DeviceCommandError(`The device could not create ${path}`, 'AFC_ERROR');
    const handle = opened.payload.subarray(0, 8);
    const file = await open(localPath, 'r');
    try {
      const buffer = Buffer.alloc(CHUNK);
      for (;;) {
        const { bytesRead } = await file.read(buffer, 0, CHUNK, null);
        if (!bytesRead) break;
        await this.call(Op.FILE_WRITE, handle, Buffer.from(buffer.subarray(0, bytesRead)));
      }
    } finally {
      await file.close();
    }
    await this.call(Op.FILE_CLOSE, handle);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.socket.end();
    await Promise.race([once(this.socket, 'close'), new Promise((r) => setTimeout(r, 1000))]);
    this.socket.destroy();
  }
}
