/** A screen's pixels: drawn once per frame number, and its PNG and JPEG kept until the next frame. */
import { PNG } from 'pngjs';
import { Canvas } from './canvas';
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
      const { width, height, data } = this.canvas;
      this.pngCache = { frame: this.drawn, data: PNG.sync.write({ width, height, data } as PNG, { deflateLevel: 1, filterType: 1 }) };
    }
    return this.pngCache.data;
  }

  jpeg(quality: number, width: number, height: number): Buffer {
    const key = `${this.drawn}:${quality}:${width}x${height}`;
    if (this.jpegCache?.key !== key) this.jpegCache = { key, data: encodeJpeg(this.canvas.scaled(width, height), width, height, quality) };
    return this.jpegCache.data;
  }
}
