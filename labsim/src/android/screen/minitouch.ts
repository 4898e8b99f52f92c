/**
 * minitouch's socket as the device runs it: one client at a time on `localabstract:<name>`; on connect `v 1`,
 * `^ <contacts> <max-x> <max-y> <max-pressure>` and `$ <pid>`, then the client's lines `d/m/u <contact> ...`,
 * `c` (commit), `w <ms>` (wait) and `r` (reset). Touch coordinates are in the touch panel's range, not in screen
 * pixels: the range here differs from every display size, so a client that forgets to scale misses its target.
 */
import type { Duplex } from 'node:stream';
import type { DeviceSockets } from '../device-sockets';
import type { DeviceScreen } from './device-screen';
import { panelToDisplay } from './layout';

export const TOUCH_MAX_X = 4095;
export const TOUCH_MAX_Y = 4095;
const MAX_CONTACTS = 10;
const MAX_PRESSURE = 255;
/** A line longer than this is no minitouch command: the client is dropped. */
const MAX_LINE = 256;

type Pending = { phase: 'down' | 'move' | 'up'; contact: number; x: number; y: number };

export function startMinitouchServer(screen: DeviceScreen, sockets: DeviceSockets, pid: number, socketName: string): { close(): void } {
  const waiting: Duplex[] = [];
  let current: Duplex | undefined;
  const next = () => {
    current = waiting.shift();
    if (current) serve(screen, current, pid, next);
  };
  const listening = sockets.listen({ kind: 'localabstract', name: socketName }, (socket) => {
    socket.on('error', () => undefined);
    if (current) {
      waiting.push(socket);
      socket.once('close', () => waiting.splice(waiting.indexOf(socket) >>> 0, 1));
    } else {
      current = socket;
      serve(screen, socket, pid, next);
    }
  });
  return {
    close: () => {
      listening.close();
      for (const s of waiting.splice(0)) s.destroy();
      current?.destroy();
    },
  };
}

function serve(screen: DeviceScreen, socket: Duplex, pid: number, done: () => void): void {
  // Panel pixels in the natural orientation; the screen turns them into display coordinates.
  const toX = (v: number) => Math.min(screen.width - 1, Math.max(0, (v * screen.width) / (TOUCH_MAX_X + 1)));
  const toY = (v: number) => Math.min(screen.height - 1, Math.max(0, (v * screen.height) / (TOUCH_MAX_Y + 1)));
  const down = new Map<number, { x: number; y: number }>();
  let pending: Pending[] = [];
  let buffered = '';
  // Lines run in order; a `w` holds back the ones after it.
  let queue: Promise<void> = Promise.resolve();
  let closed = false;

  const run = async (line: string): Promise<void> => {
    const [op, ...rest] = line.trim().split(/\s+/);
    const n = rest.map(Number);
    const contactOk = Number.isInteger(n[0]) && n[0] >= 0 && n[0] < MAX_CONTACTS;
    if ((op === 'd' || op === 'm') && contactOk && n.length >= 3 && n.slice(1, 3).every(Number.isFinite)) {
      pending.push({ phase: op === 'd' ? 'down' : 'move', contact: n[0], x: toX(n[1]), y: toY(n[2]) });
    } else if (op === 'u' && contactOk) {
      const at = pending.filter((p) => p.contact === n[0]).pop() ?? { ...down.get(n[0]) };
      pending.push({ phase: 'up', contact: n[0], x: at.x ?? 0, y: at.y ?? 0 });
    } else if (op === 'c') {
      for (const p of pending) {
        if (p.phase === 'up') down.delete(p.contact);
        else down.set(p.contact, { x: p.x, y: p.y });
        screen.touch(p.contact, p.phase, ...panelToDisplay(screen.rotation, screen.width, screen.height, p.x, p.y));
      }
      pending = [];
    } else if (op === 'w' && Number.isFinite(n[0])) {
      await new Promise((r) => setTimeout(r, Math.min(Math.max(0, n[0]), 60_000)));
    } else if (op === 'r') {
      pending = [];
      for (const [contact, at] of down) screen.touch(contact, 'up', ...panelToDisplay(screen.rotation, screen.width, screen.height, at.x, at.y));
      down.clear();
    }
  };

  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    if (buffered.length > MAX_LINE) {
      socket.destroy();
      return;
    }
    for (const line of lines) queue = queue.then(() => (closed ? undefined : run(line)));
  });
  socket.once('close', () => {
    closed = true;
    // Contacts still down when the client goes are cancelled, as the kernel does when the device is released.
    for (const [contact] of down) screen.touch(contact, 'cancel', 0, 0);
    down.clear();
    done();
  });
  socket.write(`v 1\n^ ${MAX_CONTACTS} ${TOUCH_MAX_X} ${TOUCH_MAX_Y} ${MAX_PRESSURE}\n$ ${pid}\n`);
}
