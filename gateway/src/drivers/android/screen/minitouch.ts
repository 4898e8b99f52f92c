/**
 * Touch through minitouch: its greeting (`v <version>`, `^ <max-contacts> <max-x> <max-y> <max-pressure>`,
 * `$ <pid>`) gives the touch device's range, which is not the display's pixels, so normalised points are scaled
 * to it; each change is one `d`/`m`/`u` line and a commit `c`. Points come as the viewer sees the frame (turned by
 * the rotation) and are turned back to the panel's upright axes first.
 */
import type { DeviceClient } from '@devicefarmer/adbkit';
import type { Duplex } from 'node:stream';
import type { Logger } from '@devicelab/shared';
import { AGENT_DIR, connectAgent, killAgent, pushFile, readGreeting, startAgent } from './device-agent';

export interface MinitouchRange {
  maxContacts: number;
  maxX: number;
  maxY: number;
  maxPressure: number;
  pid: number;
}

export function parseMinitouchGreeting(text: string): MinitouchRange | undefined {
  if (!text.includes('\n$')) return undefined;
  const caret = /^\^ (\d+) (\d+) (\d+) (\d+)$/m.exec(text);
  const pid = /^\$ (\d+)$/m.exec(text);
  if (!caret || !pid) return undefined;
  return { maxContacts: Number(caret[1]), maxX: Number(caret[2]), maxY: Number(caret[3]), maxPressure: Number(caret[4]), pid: Number(pid[1]) };
}

/** A point as shown (0..1 across the turned frame) on the panel's upright axes (0..1). */
export function uprightPoint(x: number, y: number, rotation: number): { x: number; y: number } {
  switch (rotation) {
    case 90: return { x: 1 - y, y: x };
    case 180: return { x: 1 - x, y: 1 - y };
    case 270: return { x: y, y: 1 - x };
    default: return { x, y };
  }
}

export class Minitouch {
  private constructor(
    private readonly device: DeviceClient, private readonly socket: Duplex, private readonly shell: Duplex,
    readonly range: MinitouchRange,
  ) {}

  static async start(device: DeviceClient, binary: string): Promise<Minitouch> {
    const remote = `${AGENT_DIR}/minitouch`;
    await pushFile(device, binary, remote);
    const agent = await startAgent(device, `exec ${remote}`);
    let shellOpen = true;
    agent.stream.once('close', () => { shellOpen = false; });
    try {
      const { socket, greeting } = await connectAgent(device, 'minitouch', 10_000, async (socket) =>
        (await readGreeting(socket, (bytes) => parseMinitouchGreeting(bytes.toString('utf8')), 3_000)).value, () => shellOpen);
      socket.resume();
      socket.on('data', () => undefined);
      socket.on('error', () => undefined);
      return new Minitouch(device, socket, agent.stream, greeting);
    } catch (err) {
      agent.stream.destroy();
      throw err;
    }
  }

  /** One touch change: down, move or up of `contact` at a point as shown (0..1) on a frame turned by `rotation`. */
  touch(action: 'd' | 'm' | 'u', contact: number, x: number, y: number, rotation: number): void {
    const c = Math.min(contact, Math.max(0, this.range.maxContacts - 1));
    if (action === 'u') {
      this.socket.write(`u ${c}\nc\n`);
      return;
    }
    const point = uprightPoint(x, y, rotation);
    const px = Math.round(point.x * this.range.maxX);
    const py = Math.round(point.y * this.range.maxY);
    const pressure = Math.max(1, Math.min(50, this.range.maxPressure));
    this.socket.write(`${action} ${c} ${px} ${py} ${pressure}\nc\n`);
  }

  async stop(): Promise<void> {
    this.socket.destroy();
    this.shell.destroy();
    await killAgent(this.device, this.range.pid);
  }
}

/** Starts minitouch, or gives none (logged) when it cannot: the screen is then shown without touch. */
export async function startMinitouchIfAble(device: DeviceClient, binary: string, logger: Logger): Promise<Minitouch | undefined> {
  try {
    return await Minitouch.start(device, binary);
  } catch (err) {
    logger.warn({ err, device: device.serial }, 'minitouch did not start: the screen is view only');
    return undefined;
  }
}
