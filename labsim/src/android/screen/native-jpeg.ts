/**
 * JPEG frames for the screen streams (minicap) by libjpeg-turbo through `sharp`, on libuv's thread pool: the
 * simulator's event loop, which also carries every other simulated device (and, in tests, the hub and gateway),
 * only copies the picture and hands it over (0.5-3 ms for a 720x1600 screen, against 30-40 ms of encoding and
 * 10-30 ms of scaling in JavaScript on the same machine). Where sharp's prebuilt library cannot load, the
 * JavaScript encoder does the work on the event loop.
 */
import type SharpModule from 'sharp';

let loaded: typeof SharpModule | null | undefined;

function sharp(): typeof SharpModule | null {
  if (loaded === undefined) {
    try {
      loaded = require('sharp') as typeof SharpModule;
      // One encoding at a time per process is enough for screens, and leaves the other core to the rest.
      loaded.concurrency(1);
    } catch {
      loaded = null;
    }
  }
  return loaded;
}

export function nativeJpegAvailable(): boolean {
  return sharp() !== null;
}

/**
 * `rgba` (width x height, copied by the caller if it changes meanwhile) turned clockwise by `turn` quarter turns
 * and scaled (nearest pixel) to outWidth x outHeight, as a baseline 4:2:0 JPEG.
 */
export function encodeJpegNative(
  rgba: Buffer, width: number, height: number, outWidth: number, outHeight: number, turn: number, quality: number,
): Promise<Buffer> {
  const lib = sharp();
  if (!lib) return Promise.reject(new Error('sharp is not available'));
  let image = lib(rgba, { raw: { width, height, channels: 4 } });
  if (turn % 4 !== 0) image = image.rotate((turn % 4) * 90);
  if (outWidth !== (turn % 2 ? height : width) || outHeight !== (turn % 2 ? width : height)) {
    image = image.resize(outWidth, outHeight, { kernel: 'nearest', fit: 'fill' });
  }
  return image.removeAlpha().jpeg({ quality, chromaSubsampling: '4:2:0', progressive: false, mozjpeg: false }).toBuffer();
}
