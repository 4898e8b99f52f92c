/** A screen's pixels: drawn once per frame number, and its PNG and JPEG kept until the next frame. */
import { crc32, deflateSync } from 'node:zlib';
import { Canvas, turnClockwise } from './canvas';
import { encodeJpeg } from './jpeg-encoder';

export class FrameStore {
  readonly canvas: Canvas;
  private drawn = -1;
  private pngCache: { frame: number; data: Buffer } | undefined;
  private jpegCache: { key: string; data: Buffer } | undefined;

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
    const key = `${this.drawn}:${quality}:${width}x${height}:${turn}`;
    if (this.jpegCache?.key !== key) {
      const [w, h] = turn % 2 === 1 ? [height, width] : [width, height];
      this.jpegCache = { key, data: encodeJpeg(turnClockwise(this.canvas.scaled(w, h), w, h, turn), width, height, quality) };
    }
    return this.jpegCache.data;
  }
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
