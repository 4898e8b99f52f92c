/**
 * minicap's socket as the device runs it: one client at a time on `localabstract:<name>`; a 24-byte banner, then
 * frames (uint32 LE length + JPEG of the projection's size) at connect and on each change of the screen, at most
 * `fps` a second. A slow client gets the newest picture: a frame is only made once the previous one was taken.
 */
import type { Duplex } from 'node:stream';
import type { DeviceSockets } from '../device-sockets';
import type { DeviceScreen } from './device-screen';

export interface Projection {
  realWidth: number;
  realHeight: number;
  virtualWidth: number;
  virtualHeight: number;
  /** Quarter turns (the -P argument's degrees / 90). */
  orientation: number;
}

export interface MinicapOptions {
  pid: number;
  projection: Projection;
  quality: number;
  fps: number;
  socketName: string;
}

/** `-P WxH@VWxVH/R`; the virtual size shrinks to keep the display's aspect ratio, as minicap does. */
export function parseProjection(text: string | undefined, screen: DeviceScreen): Projection | undefined {
  if (text === undefined) return { realWidth: screen.width, realHeight: screen.height, virtualWidth: screen.width, virtualHeight: screen.height, orientation: 0 };
  const m = /^(\d{1,5})x(\d{1,5})@(\d{1,5})x(\d{1,5})\/(0|90|180|270)$/.exec(text);
  if (!m) return undefined;
  const [realWidth, realHeight, wantWidth, wantHeight] = [m[1], m[2], m[3], m[4]].map(Number);
  if (!realWidth || !realHeight || !wantWidth || !wantHeight) return undefined;
  const scale = Math.min(wantWidth / realWidth, wantHeight / realHeight, 1);
  return {
    realWidth, realHeight,
    virtualWidth: Math.max(1, Math.round(realWidth * scale)), virtualHeight: Math.max(1, Math.round(realHeight * scale)),
    orientation: Number(m[5]) / 90,
  };
}

/** The size of a frame: the projection's virtual size, turned with the projection's rotation (frames are upright). */
export function frameSize(p: Projection): [number, number] {
  return p.orientation % 2 === 1 ? [p.virtualHeight, p.virtualWidth] : [p.virtualWidth, p.virtualHeight];
}

/**
 * The JPEG of the screen for a projection. minicap takes the rotation once, at start: while the display stands as
 * projected the picture is upright; once the display turned, its picture lies sideways (or upside down) in frames
 * of the old shape until minicap is started again with the new rotation.
 */
export function projectedJpeg(screen: DeviceScreen, p: Projection, quality: number): Buffer {
  return screen.jpeg(quality, ...frameSize(p), (screen.rotation - p.orientation + 4) % 4);
}

/** Frames show the display as its user sees it, whatever the rotation: clients do not turn them. */
const QUIRK_ALWAYS_UPRIGHT = 2;

export function minicapBanner(o: MinicapOptions): Buffer {
  const b = Buffer.alloc(24);
  b[0] = 1;
  b[1] = 24;
  b.writeUInt32LE(o.pid, 2);
  b.writeUInt32LE(o.projection.realWidth, 6);
  b.writeUInt32LE(o.projection.realHeight, 10);
  b.writeUInt32LE(o.projection.virtualWidth, 14);
  b.writeUInt32LE(o.projection.virtualHeight, 18);
  b[22] = o.projection.orientation;
  b[23] = QUIRK_ALWAYS_UPRIGHT;
  return b;
}

/** Starts listening; throws EADDRINUSE when another program has the socket name. */
export function startMinicapServer(screen: DeviceScreen, sockets: DeviceSockets, o: MinicapOptions): { close(): void } {
  const waiting: Duplex[] = [];
  let current: { socket: Duplex; stop(): void } | undefined;
  const next = () => {
    current = undefined;
    const socket = waiting.shift();
    if (socket) current = serve(screen, socket, o, next);
  };
  const listening = sockets.listen({ kind: 'localabstract', name: o.socketName }, (socket) => {
    socket.on('error', () => undefined);
    if (current) {
      // One client at a time: the next waits as if in the listen backlog.
      waiting.push(socket);
      socket.once('close', () => waiting.splice(waiting.indexOf(socket) >>> 0, 1));
    } else current = serve(screen, socket, o, next);
  });
  return {
    close: () => {
      listening.close();
      for (const s of waiting.splice(0)) s.destroy();
      current?.stop();
    },
  };
}

function serve(screen: DeviceScreen, socket: Duplex, o: MinicapOptions, done: () => void): { socket: Duplex; stop(): void } {
  const interval = 1000 / Math.max(1, Math.min(60, o.fps));
  let wanted = true;
  let draining = false;
  let timer: NodeJS.Timeout | undefined;
  let lastSentAt = 0;
  let lastEncodeMs = 0;
  let ended = false;
  const pump = () => {
    if (ended || !wanted || draining || timer) return;
    // Encoding runs on the simulator's only thread: at least twice its cost passes between frames, so a screen
    // that changes all the time cannot starve the other simulated devices.
    const wait = lastSentAt + Math.max(interval, 2 * lastEncodeMs) - Date.now();
    if (wait > 0) {
      timer = setTimeout(() => {
        timer = undefined;
        pump();
      }, wait);
      return;
    }
    wanted = false;
    const started = Date.now();
    const jpeg = projectedJpeg(screen, o.projection, o.quality);
    lastSentAt = Date.now();
    lastEncodeMs = lastSentAt - started;
    const length = Buffer.alloc(4);
    length.writeUInt32LE(jpeg.length);
    if (!socket.write(Buffer.concat([length, jpeg]))) {
      draining = true;
      socket.once('drain', () => {
        draining = false;
        pump();
      });
    }
  };
  const onChange = () => {
    wanted = true;
    pump();
  };
  const stop = () => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    screen.off('change', onChange);
    socket.destroy();
    done();
  };
  socket.once('close', stop);
  socket.on('data', () => undefined); // minicap reads nothing from its client
  screen.on('change', onChange);
  socket.write(minicapBanner(o));
  pump();
  return { socket, stop };
}
