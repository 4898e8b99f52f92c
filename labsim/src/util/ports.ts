/** Free TCP port discovery on the loopback interface. */
import * as net from 'node:net';

export function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

/** An ephemeral port the OS considers free right now (above 32768, so never in adb's 5555-5585 scan range). */
export function ephemeralPort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** A random free port within [min, max] (used for private adb servers). */
export async function randomFreePort(min: number, max: number): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = min + Math.floor(Math.random() * (max - min + 1));
    if (await isPortFree(port)) return port;
  }
  throw new Error(`no free port in ${min}-${max}`);
}
