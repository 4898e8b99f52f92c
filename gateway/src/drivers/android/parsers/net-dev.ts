/**
 * `/proc/net/dev`: two header lines, then `iface: <16 numbers>` (receive bytes packets errs drop fifo frame
 * compressed multicast, transmit bytes packets errs drop fifo colls carrier compressed). Split at the FIRST
 * colon: old kernels glue a wide number to it (`wlan0:98765432`).
 */
import { lines } from './text';

export interface InterfaceCounters {
  name: string;
  rxBytes: number;
  rxPackets: number;
  rxErrors: number;
  rxDropped: number;
  txBytes: number;
  txPackets: number;
  txErrors: number;
  txDropped: number;
}

/** Interfaces that carry no device traffic of their own (loopback, placeholders, tunnels). */
const VIRTUAL = /^(lo|dummy\d*|ip6tnl\d*|ip_vti\d*|ip6_vti\d*|sit\d*|tunl\d*|gre\d*|gretap\d*|erspan\d*|ifb\d*)$/;

export function isCountedInterface(name: string): boolean {
  return !VIRTUAL.test(name);
}

export function parseNetDev(text: string): InterfaceCounters[] {
  const result: InterfaceCounters[] = [];
  for (const line of lines(text)) {
    const colon = line.indexOf(':');
    if (colon < 0 || line.includes('|')) continue;
    const name = line.slice(0, colon).trim();
    const n = line.slice(colon + 1).trim().split(/\s+/).map(Number);
    if (!name || n.length < 16 || n.some((v) => !Number.isFinite(v))) continue;
    result.push({
      name, rxBytes: n[0], rxPackets: n[1], rxErrors: n[2], rxDropped: n[3],
      txBytes: n[8], txPackets: n[9], txErrors: n[10], txDropped: n[11],
    });
  }
  return result;
}
