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

/**
 * The same port for the same key on every run (in [min, max], away from adb's 5555-5585 scan), or undefined when
 * it is taken. The demo uses it so a simulated device keeps its adb serial `127.0.0.1:<port>`, and with it its
 * record and Guid at the hub, across restarts.
 */
export async function stablePort(key: string, min = 20000, max = 29999): Promise<number | undefined> {
  let hash = 0;
  for (const char of key) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  const port = min + (hash % (max - min + 1));
  return (await isPortFree(port)) ? port : undefined;
}
