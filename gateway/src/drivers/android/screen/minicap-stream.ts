/**
 * minicap's socket protocol: once a banner (version, its length, pid, real and virtual size, orientation, quirks;
 * little-endian), then frames, each a little-endian uint32 length and that many bytes of JPEG. The reader keeps at
 * most one frame's bytes; a length beyond the bound is a broken stream, not a reason to buffer.
 */

export interface MinicapBanner {
  version: number;
  pid: number;
  realWidth: number;
  realHeight: number;
  virtualWidth: number;
  virtualHeight: number;
  /** Degrees (the banner carries quarter turns). */
  orientation: number;
  quirks: number;
}

/** No frame of a phone's display comes near this; a length beyond it means the stream is not minicap's. */
const MAX_FRAME_BYTES = 32 * 1024 * 1024;

export interface MinicapListener {
  banner(banner: MinicapBanner): void;
  frame(jpeg: Buffer): void;
  invalid(reason: string): void;
}

export class MinicapStreamReader {
  private pending: Buffer = Buffer.alloc(0);
  private bannerSeen = false;
  private failed = false;

  constructor(private readonly listener: MinicapListener) {}

  push(chunk: Buffer): void {
    if (this.failed) return;
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    if (!this.bannerSeen) {
      if (this.pending.length < 2) return;
      const length = this.pending[1];
      if (length < 24) return this.fail(`banner of ${length} bytes`);
      if (this.pending.length < length) return;
      const b = this.pending;
      this.bannerSeen = true;
      this.listener.banner({
        version: b[0], pid: b.readUInt32LE(2), realWidth: b.readUInt32LE(6), realHeight: b.readUInt32LE(10),
        virtualWidth: b.readUInt32LE(14), virtualHeight: b.readUInt32LE(18), orientation: b[22] * 90, quirks: b[23],
      });
      this.pending = this.pending.subarray(length);
    }
    while (this.pending.length >= 4) {
      const length = this.pending.readUInt32LE(0);
      if (length === 0 || length > MAX_FRAME_BYTES) return this.fail(`frame of ${length} bytes`);
      if (this.pending.length < 4 + length) return;
      const frame = Buffer.from(this.pending.subarray(4, 4 + length)); // copied: the rest of the chunk is released
      this.pending = this.pending.subarray(4 + length);
      if (frame[0] !== 0xff || frame[1] !== 0xd8) return this.fail('a frame that is not a JPEG');
      this.listener.frame(frame);
    }
  }

  private fail(reason: string): void {
    this.failed = true;
    this.pending = Buffer.alloc(0);
    this.listener.invalid(reason);
  }
}

/**
 * The `-P` projection: the real size upright, the virtual size fitted within `maxEdge` pixels on its long side
 * (half-size frames cost a quarter of the encoding), and the rotation.
 */
export function projection(width: number, height: number, rotation: number, maxEdge: number): string {
  const scale = Math.min(1, maxEdge / Math.max(width, height));
  const vw = Math.max(1, Math.round(width * scale));
  const vh = Math.max(1, Math.round(height * scale));
  return `${width}x${height}@${vw}x${vh}/${rotation}`;
}
