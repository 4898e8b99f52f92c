/**
 * Helpers for the iOS simulator tests: Debian's libimobiledevice tools run unchanged against the world's
 * usbmuxd (USBMUXD_SOCKET_ADDRESS), and a usbmux Listen client records Attached/Detached pushes.
 */
import { execFile } from 'node:child_process';
import * as net from 'node:net';
import type { LabWorld } from '../src';
import { usbmuxFrame } from '../src/ios/usbmux-forward';

export { usbmuxFrame };
import { PlistDict, decodePlistDict } from '@devicelab/shared';

export interface ToolResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a libimobiledevice tool against the world's usbmuxd. */
export function idevice(world: LabWorld) {
  return (tool: string, ...args: string[]): Promise<ToolResult> =>
    new Promise((resolve) => {
      execFile(tool, args, { env: { ...process.env, ...world.env() }, timeout: 30_000 }, (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      });
    });
}

/** A usbmux client that sent Listen and keeps every message (tag, plist) it receives. */
export class UsbmuxListener {
  readonly messages: { tag: number; message: PlistDict }[] = [];
  private constructor(private readonly socket: net.Socket) {
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 16 && pending.length >= pending.readUInt32LE(0)) {
        const length = pending.readUInt32LE(0);
        this.messages.push({ tag: pending.readUInt32LE(12), message: decodePlistDict(pending.subarray(16, length)) });
        pending = pending.subarray(length);
      }
    });
  }

  static async open(world: LabWorld): Promise<UsbmuxListener> {
    const socket = net.connect(world.iosFleet.usbmuxd.socketPath);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.write(usbmuxFrame({ MessageType: 'Listen', ClientVersionString: 'labsim-test', ProgName: 'labsim-test' }, 1));
    return new UsbmuxListener(socket);
  }

  /** Attached/Detached pushes for a UDID (Detached carries only the DeviceID, so it is matched by id). */
  events(udid: string): string[] {
    const ids = new Set<number>();
    const out: string[] = [];
    for (const { message } of this.messages) {
      const props = message.Properties as PlistDict | undefined;
      if (message.MessageType === 'Attached' && props?.SerialNumber === udid) {
        ids.add(Number(message.DeviceID));
        out.push('Attached');
      } else if (message.MessageType === 'Detached' && ids.has(Number(message.DeviceID))) {
        out.push('Detached');
      }
    }
    return out;
  }

  close(): void {
    this.socket.destroy();
  }
}
