/**
 * TCP listener of one simulated device (what `adb connect 127.0.0.1:<port>` reaches).
 *
 * While the device is "booting" the listener is closed, so the adb server's
 * reconnect attempts are refused exactly as for a rebooting phone.
 */
import * as net from 'node:net';
import { AdbdConnection } from './connection';
import type { DevicePort } from './device-port';

export class AdbdListener {
  private server: net.Server | null = null;
  private readonly connections = new Set<AdbdConnection>();

  constructor(private readonly device: DevicePort, readonly port: number, private readonly host = '127.0.0.1') {}

  get listening(): boolean {
    return this.server !== null;
  }

  async start(): Promise<void> {
    if (this.server) return;
    const server = net.createServer((socket) => {
      const conn = new AdbdConnection(socket, this.device);
      this.connections.add(conn);
      socket.on('close', () => this.connections.delete(conn));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, this.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
  }

  /** Stops accepting and drops every live connection. */
  async stop(): Promise<void> {
    this.dropConnections();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Drops live transports but keeps listening (the adb server will reconnect). */
  dropConnections(): void {
    for (const c of this.connections) c.destroy();
    this.connections.clear();
  }
}
