/**
 * One adbd transport connection (one TCP socket from the adb server).
 *
 * Handles the CNXN handshake, the optional AUTH exchange, and stream
 * multiplexing (OPEN/OKAY/WRTE/CLSE). Services are attached per OPEN.
 */
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import {
  A_AUTH, A_CLSE, A_CNXN, A_OKAY, A_OPEN, A_VERSION_SKIP_CHECKSUM as A_VERSION, A_WRTE, AUTH_RSAPUBLICKEY,
  AUTH_SIGNATURE, AUTH_TOKEN, type AdbPacket, AdbPacketReader, adbPacketHeader,
} from '@devicelab/shared';
import { AdbStream, StreamSink } from './stream';
import type { DevicePort, DropFault } from './device-port';
import { openService } from './services';

/** Largest payload we accept from the host (the real adbd's MAX_PAYLOAD). */
const MAX_PAYLOAD = 1024 * 1024;

export class AdbdConnection implements StreamSink {
  private readonly parser = new AdbPacketReader(MAX_PAYLOAD);
  private readonly streams = new Map<number, AdbStream>();
  private nextLocalId = 1;
  private online = false;
  private hostMaxData = 4096;
  /** Set once the host proved (by sending its public key) that it holds a key we accepted. */
  private keyAccepted = false;
  private drop: DropFault | undefined;
  private sentBytes = 0;

  constructor(private readonly socket: Socket, private readonly device: DevicePort) {
    socket.setNoDelay(true);
    socket.on('data', (chunk) => this.onData(chunk));
    socket.on('error', () => this.teardown());
    socket.on('close', () => this.teardown());
  }

  /** Kills the TCP connection (unplug, reboot, fault injection). */
  destroy(): void {
    this.socket.destroy();
    this.teardown();
  }

  sendWrite(localId: number, remoteId: number, data: Buffer): void {
    this.send(A_WRTE, localId, remoteId, data);
    this.sentBytes += data.length;
    if (this.drop?.afterBytes !== undefined && this.sentBytes >= this.drop.afterBytes) this.destroy();
  }

  sendClose(localId: number, remoteId: number): void {
    this.send(A_CLSE, localId, remoteId);
  }

  /** Always with a correct data check: older hosts verify it. */
  private send(command: number, arg0: number, arg1: number, data?: Buffer): void {
    if (this.socket.destroyed) return;
    this.socket.cork();
    this.socket.write(adbPacketHeader(command, arg0, arg1, data, true));
    if (data?.length) this.socket.write(data);
    this.socket.uncork();
  }

  private onData(chunk: Buffer): void {
    let packets: AdbPacket[];
    try {
      packets = this.parser.push(chunk);
    } catch {
      // A corrupt stream cannot be resynchronised: behave like adbd and hang up.
      this.destroy();
      return;
    }
    for (const p of packets) {
      if (this.socket.destroyed) return;
      this.handle(p);
    }
  }

  private handle(p: AdbPacket): void {
    switch (p.command) {
      case A_CNXN:
        return this.onConnect(p);
      case A_AUTH:
        return this.onAuth(p);
      case A_OPEN:
        return this.onOpen(p);
      case A_OKAY:
        this.streams.get(p.arg1)?.onAck();
        return;
      case A_WRTE: {
        const stream = this.streams.get(p.arg1);
        if (!stream) return;
        // Acknowledge first: services buffer host data in memory, so there is
        // no reason to throttle the host.
        this.send(A_OKAY, stream.localId, stream.remoteId);
        stream.onHostData(p.data);
        return;
      }
      case A_CLSE: {
        const stream = this.streams.get(p.arg1);
        if (!stream) return;
        this.streams.delete(p.arg1);
        if (!stream.closed) this.send(A_CLSE, stream.localId, stream.remoteId);
        stream.onHostClose();
        return;
      }
      default:
        return; // SYNC/STLS and unknown commands are ignored, as adbd does for unadvertised features.
    }
  }

  private onConnect(p: AdbPacket): void {
    this.hostMaxData = Math.max(256, Math.min(p.arg1 || 4096, MAX_PAYLOAD));
    // A reconnecting host restarts the session: forget old streams.
    for (const s of this.streams.values()) s.onHostClose();
    this.streams.clear();
    this.online = false;
    this.drop = this.device.takeDropFault();
    this.sentBytes = 0;
    if (this.device.authMode() === 'none' || this.keyAccepted) this.goOnline();
    else this.sendToken();
  }

  private onAuth(p: AdbPacket): void {
    const mode = this.device.authMode();
    if (this.online) return;
    if (p.arg0 === AUTH_SIGNATURE) {
      // We cannot check signatures against keys we never saw, and a host only
      // falls back to sending its public key after a rejected signature: so
      // always ask again, like adbd does for unknown keys.
      this.sendToken();
    } else if (p.arg0 === AUTH_RSAPUBLICKEY && mode === 'accept') {
      this.keyAccepted = true;
      this.goOnline();
    }
    // mode 'reject': the user never taps "Allow", the host stays unauthorized.
  }

  private sendToken(): void {
    this.send(A_AUTH, AUTH_TOKEN, 0, randomBytes(20));
  }

  private goOnline(): void {
    this.online = true;
    this.send(A_CNXN, A_VERSION, MAX_PAYLOAD, Buffer.from(this.device.banner()));
  }

  private onOpen(p: AdbPacket): void {
    if (!this.online) return; // adbd ignores streams before the handshake completed.
    if (this.drop?.onNextStream) {
      this.destroy();
      return;
    }
    const service = p.data.toString('utf8').replace(/\0+$/, '');
    const localId = this.nextLocalId++;
    const stream = new AdbStream(localId, p.arg0, service, this, this.hostMaxData);
    this.streams.set(localId, stream);
    stream.on('close', () => {
      // Keep the id registered until the host echoes CLSE, so a late OKAY finds nothing harmful.
      if (stream.closed && !this.socket.destroyed) setTimeout(() => this.streams.delete(localId), 1000).unref();
    });
    this.device.refreshGeneratedFiles();
    const start = openService(service, stream, this.device);
    if (!start) {
      // Refusal is CLSE with local id 0; adb reports "failed to run <service>. Error: closed".
      this.streams.delete(localId);
      this.send(A_CLSE, 0, p.arg0);
      return;
    }
    this.send(A_OKAY, localId, p.arg0);
    start();
  }

  private teardown(): void {
    for (const s of this.streams.values()) s.onHostClose();
    this.streams.clear();
    this.online = false;
  }
}
