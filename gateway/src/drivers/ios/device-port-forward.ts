/**
 * A local TCP port that reaches a port on one device: every connection accepted here is joined (shared byte pump,
 * backpressure both ways) to a fresh connection the caller opens to the device, e.g. through usbmuxd's Connect.
 * Listens on 127.0.0.1 only: whoever reaches it is on the gateway's host (its Appium server, its screen capture).
 */
import net from 'node:net';
import { pumpBytes, socketEnd, type Logger } from '@devicelab/shared';

export interface DevicePortForward {
  readonly port: number;
  /** Stops listening and ends every connection it joined. */
  close(): Promise<void>;
}

export function forwardDevicePort(localPort: number, connect: () => Promise<net.Socket>, logger: Logger): Promise<DevicePortForward> {
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    open.add(client);
    client.once('close', () => open.delete(client));
    client.on('error', () => client.destroy());
    client.pause();
    connect().then((device) => {
      if (client.destroyed) return device.destroy();
      open.add(device);
      device.once('close', () => open.delete(device));
      device.on('error', () => device.destroy());
      device.setNoDelay(true);
      client.setNoDelay(true);
      pumpBytes(socketEnd(client), socketEnd(device));
      client.resume();
    }, (err: unknown) => {
      logger.debug({ err, localPort }, 'device port forward: the device connection failed');
      client.destroy();
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: localPort, exclusive: true }, () => {
      server.off('error', reject);
      resolve({
        port: localPort,
        close: () => new Promise<void>((done) => {
          for (const socket of open) socket.destroy();
          server.close(() => done());
        }),
      });
    });
  });
}
