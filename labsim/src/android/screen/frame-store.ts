/**
 * A screen's pixels: drawn once per frame number, and its PNG and JPEG kept until the next frame. The streams'
 * JPEGs (jpegAsync) are encoded off the event loop where the native encoder loads (native-jpeg.ts).
 */
import { crc32, deflateSync } from 'node:zlib';
import { Canvas, turnClockwise } from './canvas';
import { encodeJpeg } from './jpeg-encoder';
import { encodeJpegNative, nativeJpegAvailable } from './native-jpeg';

export class FrameStore {
  readonly canvas: Canvas;
  private drawn = -1;
  private pngCache: { frame: number; data: Buffer } | undefined;
  private jpegCache: { key: string; data: Buffer } | undefined;
  /** An encoding under way off the event loop (a second stream asking for the same frame shares it). */
  private pendingJpeg: { key: string; data: Promise<Buffer> } | undefined;

  constructor(width: number, height: number) {
    this.canvas = new Canvas(width, height);
  }

  /** Paints frame `frame` unless it is the one already drawn. */
  draw(frame: number, paint: (canvas: Canvas) => void): void {
    if (this.drawn === frame) return;
    paint(this.canvas);
    this.drawn = frame;
  }

  png(): Buffer {
    if (this.pngCache?.frame !== this.drawn) {
      this.pngCache = { frame: this.drawn, data: encodePng(this.canvas.data, this.canvas.width, this.canvas.height) };
    }
    return this.pngCache.data;
  }

  /** The picture scaled to fit width x height once turned clockwise by `turn` quarter turns, as a JPEG. */
  jpeg(quality: number, width: number, height: number, turn = 0): Buffer {
    const key = jpegKey(this.drawn, quality, width, height, turn);
    if (this.jpegCache?.key !== key) {
      const [w, h] = turn % 2 === 1 ? [height, width] : [width, height];
      this.jpegCache = { key, data: encodeJpeg(turnClockwise(this.canvas.scaled(w, h), w, h, turn), width, height, quality) };
    }
    return this.jpegCache.data;
  }

  /** As `jpeg`, encoded on libuv's thread pool where it can be: the picture is copied, the event loop goes on. */
  jpegAsync(quality: number, width: number, height: number, turn = 0): Promise<Buffer> {
    const drawn = this.drawn;
    const key = jpegKey(drawn, quality, width, height, turn);
    if (this.jpegCache?.key === key) return Promise.resolve(this.jpegCache.data);
    if (this.pendingJpeg?.key === key) return this.pendingJpeg.data;
    if (!nativeJpegAvailable()) return Promise.resolve(this.jpeg(quality, width, height, turn));
    const data = encodeJpegNative(Buffer.from(this.canvas.data), this.canvas.width, this.canvas.height, width, height, turn, quality)
      .then((jpeg) => {
        if (this.pendingJpeg?.key === key) this.pendingJpeg = undefined;
        if (this.drawn === drawn) this.jpegCache = { key, data: jpeg };
        return jpeg;
      }, (err: unknown) => {
        if (this.pendingJpeg?.key === key) this.pendingJpeg = undefined;
        throw err;
      });
    this.pendingJpeg = { key, data };
    return data;
  }
}

/** What a cached JPEG was made from: the frame drawn and how it was encoded. */
function jpegKey(frame: number, quality: number, width: number, height: number, turn: number): string {
  return `${frame}:${quality}:${width}x${height}:${turn}`;
}

/**
 * An 8-bit RGBA PNG without row filters, deflated at level 1: a screen of flat colours compresses well that way,
 * and it is several times faster than choosing filters per row.
 */
export function encodePng(rgba: Buffer, width: number, height: number): Buffer {
  const stride = width * 4;
  const raw = Buffer.alloc(height * (stride + 1));
  for (let y = 0; y < height; y++) rgba.copy(raw, y * (stride + 1) + 1, y * stride, (y + 1) * stride);
  const chunk = (type: string, body: Buffer): Buffer => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(body.length, 0);
    head.write(type, 4, 'latin1');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), body])) >>> 0, 0);
    return Buffer.concat([head, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 6, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw, { level: 1 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
