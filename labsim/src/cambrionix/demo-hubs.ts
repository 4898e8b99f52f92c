/**
 * The demo lab's USB hubs: its simulated devices on simulated 8-port Cambrionix hubs (a second hub from the
 * ninth device on), each on its own pseudo-terminal. Needs socat (Debian package `socat`); without it the
 * demo runs without hubs and says so.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import type { SimCambrionixHub } from './sim-hub';
import type { LabWorld } from '../world';

export interface DemoHubs {
  hubs: SimCambrionixHub[];
  /** Where each hub's tty is, for the gateway's configuration. */
  paths: string[];
  /** Which device is on which port (hub serial, port, device serial). */
  portMap: Array<{ hubSerialNumber: string; port: number; device: string }>;
}

function socatAvailable(): boolean {
  return spawnSync('socat', ['-V'], { stdio: 'ignore' }).status === 0;
}

export async function addDemoHubs(world: LabWorld, dir: string, deviceSerials: string[]): Promise<DemoHubs | undefined> {
  if (!socatAvailable()) return undefined;
  const result: DemoHubs = { hubs: [], paths: [], portMap: [] };
  const count = Math.max(1, Math.ceil(deviceSerials.length / 8));
  for (let h = 0; h < count; h++) {
    const serial = `DEMOHUB${h + 1}`;
    const devices = deviceSerials.slice(h * 8, h * 8 + 8);
    const attachments = Object.fromEntries(devices.map((device, i) => [i + 1, device]));
    const hub = await world.addCambrionixHub({ serial, ports: 8, path: path.join(dir, `ttyCBRX${h}`) }, attachments);
    result.hubs.push(hub);
    result.paths.push(hub.path);
    devices.forEach((device, i) => result.portMap.push({ hubSerialNumber: serial, port: i + 1, device }));
  }
  return result;
}
