/**
 * uhubctl's status text (testbench.md 2.3):
 *   Current status for hub 1-1.4 [05e3:0608 USB2.0 Hub, USB 2.10, 4 ports, ppps]
 *     Port 1: 0503 power highspeed enable connect [22d9:2769 OPPO CPH2325]
 *     Port 3: 0000 off
 * and after a change `Sent power off request` and `New status for hub ...` with the switched ports only.
 */
interface UhubctlPort {
  port: number;
  powered: boolean;
  connected: boolean;
  /** The attached device's description, '' when none. */
  device: string;
}

export interface UhubctlHub {
  location: string;
  description: string;
  ports: UhubctlPort[];
}

export function parseUhubctlStatus(text: string): UhubctlHub[] {
  const hubs: UhubctlHub[] = [];
  for (const line of text.split(/\r?\n/)) {
    // `Current status` before a change, `New status` after it.
    const hub = /^(?:Current|New) status for hub (\S+)\s*(?:\[(.*)\])?/.exec(line);
    if (hub) {
      hubs.push({ location: hub[1], description: hub[2] ?? '', ports: [] });
      continue;
    }
    const port = /^\s+Port (\d+):\s+([0-9a-f]{4})\s*([^[]*?)\s*(?:\[(.*)\])?\s*$/.exec(line);
    const current = hubs[hubs.length - 1];
    if (!port || !current) continue;
    const words = port[3].split(/\s+/);
    current.ports.push({
      port: Number(port[1]),
      powered: words.includes('power') || words.includes('Rpower'),
      connected: words.includes('connect'),
      device: port[4] ?? '',
    });
  }
  return hubs;
}
