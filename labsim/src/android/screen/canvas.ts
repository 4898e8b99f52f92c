/** An RGBA framebuffer with the few shapes the simulated screens draw: rectangles, discs, rings, text, images. */
import { ADVANCE, GLYPH_HEIGHT, glyphOf, textWidth } from './font';

/** 0xRRGGBB. */
export type Rgb = number;

export class Canvas {
  readonly data: Buffer;
  private readonly pixels: Uint32Array;

  constructor(readonly width: number, readonly height: number) {
    this.data = Buffer.alloc(width * height * 4);
    this.pixels = new Uint32Array(this.data.buffer, this.data.byteOffset, width * height);
  }

  /** The 32-bit pixel of a colour in memory order (R, G, B, A bytes on a little-endian host). */
  private static word(rgb: Rgb): number {
    return ((0xff << 24) | ((rgb & 0xff) << 16) | (rgb & 0xff00) | ((rgb >> 16) & 0xff)) >>> 0;
  }

  fill(rgb: Rgb): void {
    this.pixels.fill(Canvas.word(rgb));
  }

  rect(x: number, y: number, w: number, h: number, rgb: Rgb): void {
    const x0 = Math.max(0, Math.round(x));
    const y0 = Math.max(0, Math.round(y));
    const x1 = Math.min(this.width, Math.round(x + w));
    const y1 = Math.min(this.height, Math.round(y + h));
    if (x1 <= x0 || y1 <= y0) return;
    const word = Canvas.word(rgb);
    for (let row = y0; row < y1; row++) this.pixels.fill(word, row * this.width + x0, row * this.width + x1);
  }

  /** A rectangle with rounded corners of radius r. */
  roundRect(x: number, y: number, w: number, h: number, r: number, rgb: Rgb): void {
    r = Math.min(r, w / 2, h / 2);
    this.rect(x, y + r, w, h - 2 * r, rgb);
    for (let i = 0; i < Math.ceil(r); i++) {
      const dy = r - i - 0.5;
      const inset = r - Math.sqrt(Math.max(0, r * r - dy * dy));
      this.rect(x + inset, y + i, w - 2 * inset, 1, rgb);
      this.rect(x + inset, y + h - i - 1, w - 2 * inset, 1, rgb);
    }
  }

  disc(cx: number, cy: number, r: number, rgb: Rgb): void {
    for (let dy = -Math.ceil(r); dy <= Math.ceil(r); dy++) {
      const half = Math.sqrt(Math.max(0, r * r - dy * dy));
      if (half > 0) this.rect(cx - half, cy + dy, 2 * half, 1, rgb);
    }
  }

  ring(cx: number, cy: number, r: number, thickness: number, rgb: Rgb): void {
    const inner = Math.max(0, r - thickness);
    for (let dy = -Math.ceil(r); dy <= Math.ceil(r); dy++) {
      const outerHalf = Math.sqrt(Math.max(0, r * r - dy * dy));
      const innerHalf = Math.abs(dy) < inner ? Math.sqrt(inner * inner - dy * dy) : 0;
      if (innerHalf === 0) this.rect(cx - outerHalf, cy + dy, 2 * outerHalf, 1, rgb);
      else {
        this.rect(cx - outerHalf, cy + dy, outerHalf - innerHalf, 1, rgb);
        this.rect(cx + innerHalf, cy + dy, outerHalf - innerHalf, 1, rgb);
      }
    }
  }

  /** Text with its top-left at (x, y), each font pixel drawn as a `scale`-sized square; returns the drawn width. */
  text(x: number, y: number, text: string, scale: number, rgb: Rgb): number {
    let cx = x;
    for (const ch of text) {
      if (cx >= this.width) break;
      const glyph = glyphOf(ch);
      glyph.columns.forEach((bits, col) => {
        for (let row = 0; row < GLYPH_HEIGHT; row++) {
          if (bits & (1 << row)) this.rect(cx + col * scale, y + row * scale, scale, scale, rgb);
        }
      });
      if (glyph.accent) this.rect(cx + 1.5 * scale, y - 2 * scale, 2 * scale, scale, rgb);
      cx += ADVANCE * scale;
    }
    return cx - x;
  }

  /** Text centred horizontally on cx, shortened with "..." to fit maxWidth pixels. */
  centredText(cx: number, y: number, text: string, scale: number, rgb: Rgb, maxWidth = Infinity): void {
    const shown = fitText(text, scale, maxWidth);
    this.text(cx - (textWidth(shown) * scale) / 2, y, shown, scale, rgb);
  }

  /** Draws an RGBA image scaled (nearest pixel) into the box, blending its alpha over what is there. */
  image(src: { width: number; height: number; data: Buffer }, x: number, y: number, w: number, h: number): void {
    const x0 = Math.max(0, Math.round(x));
    const y0 = Math.max(0, Math.round(y));
    const x1 = Math.min(this.width, Math.round(x + w));
    const y1 = Math.min(this.height, Math.round(y + h));
    for (let py = y0; py < y1; py++) {
      const sy = Math.min(src.height - 1, Math.floor(((py - y) * src.height) / h));
      for (let px = x0; px < x1; px++) {
        const sx = Math.min(src.width - 1, Math.floor(((px - x) * src.width) / w));
        const s = (sy * src.width + sx) * 4;
        const a = src.data[s + 3];
        if (a === 0) continue;
        const d = (py * this.width + px) * 4;
        for (let c = 0; c < 3; c++) this.data[d + c] = (src.data[s + c] * a + this.data[d + c] * (255 - a)) / 255;
        this.data[d + 3] = 255;
      }
    }
  }

  /** The picture scaled to another size (nearest pixel), as RGBA bytes. */
  scaled(width: number, height: number): Buffer {
    if (width === this.width && height === this.height) return this.data;
    const out = Buffer.alloc(width * height * 4);
    const dst = new Uint32Array(out.buffer, out.byteOffset, width * height);
    const columns = Int32Array.from({ length: width }, (_, x) => Math.min(this.width - 1, Math.floor(((x + 0.5) * this.width) / width)));
    for (let y = 0; y < height; y++) {
      const sy = Math.min(this.height - 1, Math.floor(((y + 0.5) * this.height) / height)) * this.width;
      const row = y * width;
      for (let x = 0; x < width; x++) dst[row + x] = this.pixels[sy + columns[x]];
    }
    return out;
  }
}

/**
 * RGBA pixels of a width x height picture turned clockwise by `quarters` quarter turns (an odd number swaps the
 * sides): how a capture projected for one rotation shows a display standing in another.
 */
export function turnClockwise(rgba: Buffer, width: number, height: number, quarters: number): Buffer {
  const q = ((quarters % 4) + 4) % 4;
  if (q === 0) return rgba;
  const src = new Uint32Array(rgba.buffer, rgba.byteOffset, width * height);
  const out = Buffer.alloc(rgba.length);
  const dst = new Uint32Array(out.buffer, out.byteOffset, width * height);
  if (q === 2) {
    for (let i = 0, n = width * height; i < n; i++) dst[n - 1 - i] = src[i];
    return out;
  }
  // Turned a quarter, the picture is `height` pixels wide.
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const [ox, oy] = q === 1 ? [height - 1 - y, x] : [y, width - 1 - x];
      dst[oy * height + ox] = src[y * width + x];
    }
  }
  return out;
}

/** The text, cut with "..." so that it is at most maxWidth pixels wide at this scale. */
export function fitText(text: string, scale: number, maxWidth: number): string {
  const fitting = charsFitting(scale, maxWidth);
  const chars = [...text.slice(0, 2 * fitting + 2)];
  return chars.length <= fitting ? chars.join('') : chars.slice(0, Math.max(0, fitting - 3)).join('') + '...';
}

/** How many characters fit in maxWidth pixels at this scale. */
export function charsFitting(scale: number, maxWidth: number): number {
  return Math.max(0, Math.floor((maxWidth + scale) / (ADVANCE * scale)));
}
