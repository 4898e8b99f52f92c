/**
 * A fixed block of local ports per device, from the gateway's automation range, kept while the device is known:
 * its Appium server and every port that server's sessions forward (UiAutomator2's systemPort and MJPEG port,
 * Chromedriver, WebDriverAgent), plus spare ones for the device's screen. Explicit ports keep parallel sessions of
 * different devices from racing for the drivers' own defaults. A block with a port some other program holds is
 * skipped.
 */
import net from 'node:net';
import type { PortRange } from '../access/adb-access-endpoints';

export type { PortRange };

/** The ports of one device's block, in this order from its first port. */
export interface AutomationPorts {
  appium: number;
  systemPort: number;
  mjpegServerPort: number;
  chromedriverPort: number;
  wdaLocalPort: number;
  /** Free for the device's other local services (WebDriverAgent's MJPEG forward, screen capture). */
  spare: number[];
}

export const PORTS_PER_DEVICE = 10;
export const DEFAULT_AUTOMATION_PORTS: PortRange = { first: 20000, last: 20999 };

export class PortBlocks {
  private readonly taken = new Map<string, number>();

  constructor(private readonly range: PortRange) {
    if (range.last - range.first + 1 < PORTS_PER_DEVICE) {
      throw new Error(`The automation port range ${range.first}-${range.last} holds no block of ${PORTS_PER_DEVICE} ports`);
    }
  }

  /** The device's block, the one it had if it still has one; undefined when every block is taken or busy. */
  async assign(device: string): Promise<AutomationPorts | undefined> {
    const kept = this.taken.get(device);
    if (kept !== undefined) return portsFrom(kept);
    const used = new Set(this.taken.values());
    for (let first = this.range.first; first + PORTS_PER_DEVICE - 1 <= this.range.last; first += PORTS_PER_DEVICE) {
      if (used.has(first)) continue;
      this.taken.set(device, first); // held while probing, so a concurrent assign takes another block
      if (await allFree(first)) return portsFrom(first);
      this.taken.delete(device);
    }
    return undefined;
  }

  release(device: string): void {
    this.taken.delete(device);
  }
}

function portsFrom(first: number): AutomationPorts {
  return {
    appium: first,
    systemPort: first + 1,
    mjpegServerPort: first + 2,
    chromedriverPort: first + 3,
    wdaLocalPort: first + 4,
    spare: Array.from({ length: PORTS_PER_DEVICE - 5 }, (_, i) => first + 5 + i),
  };
}

async function allFree(first: number): Promise<boolean> {
  for (let port = first; port < first + PORTS_PER_DEVICE; port++) {
    if (!(await portFree(port))) return false;
  }
  return true;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}
