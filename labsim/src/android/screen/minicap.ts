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
  return screen.jpeg(quality, ...frameSize(p), pictureTurn(screen, p));
}

/** As `projectedJpeg`, encoded off the event loop where it can be (the stream's frames). */
export function projectedJpegAsync(screen: DeviceScreen, p: Projection, quality: number): Promise<Buffer> {
  return screen.jpegAsync(quality, ...frameSize(p), pictureTurn(screen, p));
}

/** Quarter turns clockwise the picture is turned: the display's rotation now against the one minicap started with. */
function pictureTurn(screen: DeviceScreen, p: Projection): number {
  return (screen.rotation - p.orientation + 4) % 4;
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

/**
 * Frame pacing: a change is sent at once while the stream has encoding time in hand, so the frames of a tap (the
 * touch, then the app it opened) go out as soon as the screen changed. Each frame spends its encoding time; time
 * in hand comes back at half the rate of the clock, up to `ENCODE_BURST_MS`. A screen that changes all the time
 * thus uses at most a third of the simulator's time for its frames, and cannot starve the other devices.
 */
const ENCODE_BURST_MS = 400;
/**
 * A change is drawn at the display's next refresh (60 Hz), not at once: the events of one gesture that arrive
 * together (a click's down and up) make one frame, not one each.
 */
const REFRESH_MS = 16;
/**
 * Encodings under way at once: a change during an encoding starts the next one without waiting for it (the
 * touch's frame does not hold back the frame of the app it opened); a frame finished after a newer one was sent
 * is dropped.
 */
const MAX_ENCODING = 2;

function serve(screen: DeviceScreen, socket: Duplex, o: MinicapOptions, done: () => void): { socket: Duplex; stop(): void } {
  const interval = 1000 / Math.max(1, Math.min(60, o.fps));
  let wanted = true;
  let draining = false;
  let encoding = 0;
  let started = 0;
  let sent = 0;
  let timer: NodeJS.Timeout | undefined;
  let lastStartedAt = 0;
  let credit = ENCODE_BURST_MS;
  let creditAt = Date.now();
  let ended = false;
  let changedAt = 0;
  const pump = () => {
    if (ended || !wanted || draining || encoding >= MAX_ENCODING || timer) return;
    const now = Date.now();
    credit = Math.min(ENCODE_BURST_MS, credit + (now - creditAt) / 2);
    creditAt = now;
    const wait = Math.max(lastStartedAt + interval - now, credit < 0 ? -2 * credit : 0, changedAt + REFRESH_MS - now);
    if (wait > 0) {
      timer = setTimeout(() => {
        timer = undefined;
        pump();
      }, wait);
      return;
    }
    wanted = false;
    encoding++;
    const frame = ++started;
    lastStartedAt = now;
    void projectedJpegAsync(screen, o.projection, o.quality).then((jpeg) => {
      encoding--;
      credit -= Date.now() - now;
      if (ended) return;
      if (frame < sent) return pump();
      sent = frame;
      const length = Buffer.alloc(4);
      length.writeUInt32LE(jpeg.length);
      if (!socket.write(Buffer.concat([length, jpeg]))) {
        draining = true;
        socket.once('drain', () => {
          draining = false;
          pump();
        });
      }
      pump();
    }, () => {
      encoding--;
      stop();
    });
  };
  const onChange = () => {
    if (!wanted) changedAt = Date.now();
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
