/**
 * The iOS live screen. When a capture starts it asks the device's WebDriverAgent (`GET /status` on device port
 * 8100 through usbmuxd) whether it runs. With WDA: frames from its MJPEG stream (device port 9100), input through
 * its HTTP routes (wda-input.ts), source `wda-mjpeg`. Without: lockdown's screenshotr polled as fast as the device
 * answers, view only, and the viewer is told why. WDA that answers but whose stream does not start still takes
 * input over screenshotr's frames.
 */
import type { Duplex } from 'node:stream';
import type { Logger, ScreenControls, ScreenInput } from '@devicelab/shared';
import { DeviceCommandError } from '../device-driver';
import { MjpegResponseReader, mjpegRequest } from '../../screen/mjpeg-reader';
import { NO_CONTROLS, type ScreenSink, type ScreenSource } from '../../screen/screen-source';
import { ScreenshotrScreen, takeScreenshot } from './screenshotr';
import type { DeviceLink } from './services';
import { WDA_MJPEG_PORT, WdaClient, WdaError } from './wda-client';
import { WDA_KEYS, WdaInput } from './wda-input';

export interface IosScreenOptions {
  udid: string;
  link: DeviceLink;
  /** A raw connection to a port of the device (usbmuxd Connect). */
  connect(port: number): Promise<Duplex>;
  timeoutMs: number;
  logger: Logger;
  /** How long the WDA probe waits for `/status`; default 3 s. */
  probeTimeoutMs?: number;
}

/** The largest MJPEG frame accepted (a full-resolution iPad JPEG at quality 100 stays well below). */
const MAX_FRAME_BYTES = 16 * 1024 * 1024;
const WDA_CONTROLS: ScreenControls = { touch: true, keys: true, text: true, rotate: false };
export const WITHOUT_WDA_NOTE = 'WebDriverAgent is not running on this device: view only. The screen is shown by lockdown screenshots, as fast as the device gives them.';

interface WdaScreen {
  /** The screen in WDA points, upright, and points to pixels. */
  points: { width: number; height: number };
  scale?: number;
}

export class IosScreenSource implements ScreenSource {
  private wda: WdaClient | undefined;
  private wdaInput: WdaInput | undefined;
  private screenshotr: ScreenshotrScreen | undefined;
  private closeStream: (() => void) | undefined;
  private stopped = false;

  constructor(private readonly options: IosScreenOptions) {}

  async start(sink: ScreenSink): Promise<void> {
    const wda = new WdaClient(this.options.connect, this.options.timeoutMs);
    this.wda = wda;
    const found = await this.probe(wda);
    if (this.stopped) throw new Error('The screen capture was stopped while it started.');
    if (found) {
      this.wdaInput = new WdaInput(wda, found.points);
      try {
        return await this.startMjpeg(found, sink);
      } catch (err) {
        if (this.stopped) throw err;
        this.options.logger.warn({ err, device: this.options.udid }, 'WebDriverAgent answers but its MJPEG stream did not start; screenshots instead');
      }
    } else {
      wda.close();
      this.wda = undefined;
    }
    const input = this.wdaInput;
    const screenshotr = new ScreenshotrScreen(this.options.link, this.options.udid, { timeoutMs: this.options.timeoutMs, logger: this.options.logger });
    this.screenshotr = screenshotr;
    await screenshotr.start({
      frame: (image) => sink.frame(image),
      ended: (error) => sink.ended(error),
      started: (info) => sink.started(input
        ? { ...info, controls: WDA_CONTROLS, keys: WDA_KEYS, note: 'WebDriverAgent takes input; its screen stream did not start, so the screen is shown by lockdown screenshots.' }
        : { ...info, controls: NO_CONTROLS, note: WITHOUT_WDA_NOTE }),
    });
  }

  async input(input: ScreenInput): Promise<void> {
    if (!this.wdaInput) throw new DeviceCommandError('WebDriverAgent is not running on this device: the screen is view only.', 'SCREEN_UNAVAILABLE');
    await this.wdaInput.input(input);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.closeStream?.();
    await this.screenshotr?.stop();
    await this.wdaInput?.close();
    this.wda?.close();
  }

  /** The screen's size in points when WDA answers `/status` as ready; undefined when it does not run. */
  private async probe(wda: WdaClient): Promise<WdaScreen | undefined> {
    const probeMs = this.options.probeTimeoutMs ?? 3_000;
    try {
      const status = await wda.request('GET', '/status', undefined, probeMs);
      if ((status.value as { ready?: unknown } | null)?.ready === false) return undefined;
    } catch (err) {
      this.options.logger.debug({ err, device: this.options.udid }, 'no WebDriverAgent on the device');
      return undefined;
    }
    try {
      const screen = (await wda.request('GET', '/wda/screen', undefined, probeMs)).value as { screenSize?: { width?: unknown; height?: unknown }; scale?: unknown };
      const width = Number(screen?.screenSize?.width), height = Number(screen?.screenSize?.height), scale = Number(screen?.scale);
      if (width > 0 && height > 0) return { points: { width, height }, ...(scale > 0 ? { scale } : {}) };
    } catch (err) {
      if (!(err instanceof WdaError)) return undefined;
    }
    // An older runner without /wda/screen: the window's size, the scale from the frames.
    const size = (await wda.request('GET', '/window/size', undefined, probeMs).catch(() => undefined))?.value as { width?: unknown; height?: unknown } | undefined;
    const width = Number(size?.width), height = Number(size?.height);
    return width > 0 && height > 0 ? { points: { width, height } } : undefined;
  }

  /**
   * Reads the MJPEG stream (a request on device port 9100: FBMjpegServer answers any with its stream, parts bounded
   * by the shared reader); resolves once the first frame is given.
   */
  private async startMjpeg(screen: WdaScreen, sink: ScreenSink): Promise<void> {
    const socket = await this.options.connect(WDA_MJPEG_PORT);
    this.closeStream = () => socket.destroy();
    if (this.stopped) {
      socket.destroy();
      throw new Error('The screen capture was stopped while it started.');
    }
    await new Promise<void>((resolve, reject) => {
      let started = false;
      let failed = false;
      const waitMs = this.options.timeoutMs * 2;
      // Checked after the I/O already received: a timer that fired late (a busy process) must not beat a waiting frame.
      const timer = setTimeout(() => setImmediate(() => {
        if (!started) fail(new Error(`WebDriverAgent's MJPEG stream gave no frame within ${waitMs} ms`));
      }), waitMs);
      const fail = (err: Error) => {
        if (failed) return;
        failed = true;
        clearTimeout(timer);
        socket.destroy();
        if (!started) return reject(err);
        if (!this.stopped) sink.ended(err);
      };
      const reader = new MjpegResponseReader({
        frame: (jpeg) => {
          if (failed) return;
          if (started) return sink.frame(jpeg);
          const size = jpegSize(jpeg);
          const scale = screen.scale ?? (size ? size.width / screen.points.width : 1);
          started = true;
          clearTimeout(timer);
          sink.started({
            width: Math.round(screen.points.width * scale), height: Math.round(screen.points.height * scale), rotation: 0,
            controls: WDA_CONTROLS, keys: WDA_KEYS, source: 'wda-mjpeg',
          });
          sink.frame(jpeg);
          resolve();
        },
        invalid: (reason) => fail(new Error(`WebDriverAgent's MJPEG stream broke: ${reason}`)),
        closed: () => fail(new Error('WebDriverAgent\'s MJPEG stream ended')),
      }, { maxPartBytes: MAX_FRAME_BYTES });
      socket.on('data', (chunk: Buffer) => reader.push(chunk));
      socket.once('error', (err) => fail(err));
      socket.once('close', () => fail(new Error('WebDriverAgent\'s MJPEG stream ended')));
      socket.write(mjpegRequest(`127.0.0.1:${WDA_MJPEG_PORT}`));
    });
  }
}

/** Width and height of a JPEG from its first start-of-frame marker; undefined when there is none. */
export function jpegSize(jpeg: Buffer): { width: number; height: number } | undefined {
  if (jpeg.length < 4 || jpeg[0] !== 0xff || jpeg[1] !== 0xd8) return undefined;
  let at = 2;
  while (at + 9 < jpeg.length) {
    if (jpeg[at] !== 0xff) return undefined;
    const marker = jpeg[at + 1];
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: jpeg.readUInt16BE(at + 5), width: jpeg.readUInt16BE(at + 7) };
    }
    at += 2 + jpeg.readUInt16BE(at + 2);
  }
  return undefined;
}

/**
 * One still: a screenshotr picture, or where screenshotr is not offered (no Developer Disk Image mounted), WDA's
 * `/screenshot` when it runs.
 */
export async function iosStill(options: IosScreenOptions): Promise<Buffer> {
  try {
    return await takeScreenshot(options.link, options.udid, { timeoutMs: options.timeoutMs, logger: options.logger });
  } catch (err) {
    const wda = new WdaClient(options.connect, options.timeoutMs);
    try {
      const shot = await wda.request('GET', '/screenshot', undefined, options.timeoutMs);
      if (typeof shot.value === 'string' && shot.value) return Buffer.from(shot.value, 'base64');
    } catch {
      // No WDA either: screenshotr's failure is the one to tell.
    } finally {
      wda.close();
    }
    throw err;
  }
}
