/**
 * A baseline JPEG encoder for the simulated screens: YCbCr 4:2:0, the standard quantisation tables scaled by
 * quality (IJG's formula) and the standard Huffman tables. Screens are mostly flat colour, so a block whose 64
 * samples are all equal is coded from its DC value alone, without a DCT: several times faster than a general
 * encoder on such pictures, and the same bytes a DCT would give for that block.
 */

const ZIGZAG = Uint8Array.from([
  0, 1, 5, 6, 14, 15, 27, 28, 2, 4, 7, 13, 16, 26, 29, 42, 3, 8, 12, 17, 25, 30, 41, 43, 9, 11, 18, 24, 31, 40, 44, 53,
  10, 19, 23, 32, 39, 45, 52, 54, 20, 22, 33, 38, 46, 51, 55, 60, 21, 34, 37, 47, 50, 56, 59, 61, 35, 36, 48, 49, 57, 58, 62, 63,
]);
const LUMA_QT = [
  16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62,
  18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92, 49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99,
];
const CHROMA_QT = [17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99, 24, 26, 56, 99, 99, 99, 99, 99, 47, 66, ...new Array<number>(38).fill(99)];
const AAN = [1, 1.387039845, 1.306562965, 1.175875602, 1, 0.785694958, 0.5411961, 0.275899379];

/** Huffman table specifications (JPEG K.3): code counts per length 1-16, then the symbols. */
const DC_LUMA = { counts: [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0], symbols: Buffer.from('000102030405060708090a0b', 'hex') };
const DC_CHROMA = { counts: [0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0], symbols: Buffer.from('000102030405060708090a0b', 'hex') };
const AC_LUMA = {
  counts: [0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7d],
  symbols: Buffer.from('01020300041105122131410613516107227114328191a1082342b1c11552d1f02433627282090a161718191a25262728292a3435363738393a434445464748494a535455565758595a636465666768696a737475767778797a838485868788898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9cad2d3d4d5d6d7d8d9dae1e2e3e4e5e6e7e8e9eaf1f2f3f4f5f6f7f8f9fa', 'hex'),
};
const AC_CHROMA = {
  counts: [0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77],
  symbols: Buffer.from('000102031104052131061241510761711322328108144291a1b1c109233352f0156272d10a162434e125f11718191a262728292a35363738393a434445464748494a535455565758595a636465666768696a737475767778797a82838485868788898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9cad2d3d4d5d6d7d8d9dae2e3e4e5e6e7e8e9eaf2f3f4f5f6f7f8f9fa', 'hex'),
};

type HuffmanSpec = { counts: number[]; symbols: Buffer };
/** code and length per symbol. */
type HuffmanTable = { code: Uint16Array; length: Uint8Array };

function huffmanTable(spec: HuffmanSpec): HuffmanTable {
  const table = { code: new Uint16Array(256), length: new Uint8Array(256) };
  let code = 0;
  let k = 0;
  spec.counts.forEach((count, i) => {
    for (let j = 0; j < count; j++, k++, code++) {
      table.code[spec.symbols[k]] = code;
      table.length[spec.symbols[k]] = i + 1;
    }
    code <<= 1;
  });
  return table;
}

const TABLES = { dcLuma: huffmanTable(DC_LUMA), acLuma: huffmanTable(AC_LUMA), dcChroma: huffmanTable(DC_CHROMA), acChroma: huffmanTable(AC_CHROMA) };

/** A quantisation table for a quality (1-100) in zigzag order, and its divisors for the scaled DCT output. */
function quantisation(base: number[], quality: number): { zigzag: Uint8Array; divisors: Float64Array } {
  const q = Math.max(1, Math.min(100, Math.round(quality)));
  const scale = q < 50 ? 5000 / q : 200 - 2 * q;
  const zigzag = new Uint8Array(64);
  const divisors = new Float64Array(64);
  for (let i = 0; i < 64; i++) {
    const value = Math.max(1, Math.min(255, Math.floor((base[i] * scale + 50) / 100)));
    zigzag[ZIGZAG[i]] = value;
    divisors[i] = 1 / (value * AAN[i >> 3] * AAN[i & 7] * 8);
  }
  return { zigzag, divisors };
}

class BitWriter {
  bytes: Buffer;
  length = 0;
  private bits = 0;
  private count = 0;

  constructor(capacity: number) {
    this.bytes = Buffer.alloc(capacity);
  }

  raw(data: ArrayLike<number>): void {
    for (let i = 0; i < data.length; i++) this.byte(data[i]);
  }

  byte(b: number): void {
    if (this.length === this.bytes.length) {
      const grown = Buffer.alloc(this.bytes.length * 2);
      this.bytes.copy(grown);
      this.bytes = grown;
    }
    this.bytes[this.length++] = b;
  }

  write(code: number, length: number): void {
    this.bits = (this.bits << length) | code;
    this.count += length;
    while (this.count >= 8) {
      this.count -= 8;
      const b = (this.bits >>> this.count) & 0xff;
      this.byte(b);
      if (b === 0xff) this.byte(0);
    }
    this.bits &= (1 << this.count) - 1;
  }

  /** Pads the last byte with one bits. */
  flush(): void {
    if (this.count > 0) this.write((1 << (8 - this.count)) - 1, 8 - this.count);
  }
}

/** Bits of a coefficient and their count (its magnitude category). */
function category(v: number): number {
  let a = v < 0 ? -v : v;
  let n = 0;
  while (a > 0) {
    n++;
    a >>= 1;
  }
  return n;
}

/** Forward DCT (AAN, float) of a level-shifted 8x8 block in place. */
function fdct(d: Float64Array): void {
  for (let pass = 0; pass < 2; pass++) {
    const step = pass === 0 ? 1 : 8;
    const next = pass === 0 ? 8 : 1;
    for (let r = 0; r < 8; r++) {
      const o = r * next;
      const d0 = d[o], d1 = d[o + step], d2 = d[o + 2 * step], d3 = d[o + 3 * step];
      const d4 = d[o + 4 * step], d5 = d[o + 5 * step], d6 = d[o + 6 * step], d7 = d[o + 7 * step];
      const t0 = d0 + d7, t7 = d0 - d7, t1 = d1 + d6, t6 = d1 - d6, t2 = d2 + d5, t5 = d2 - d5, t3 = d3 + d4, t4 = d3 - d4;
      let t10 = t0 + t3;
      const t13 = t0 - t3;
      let t11 = t1 + t2;
      let t12 = t1 - t2;
      d[o] = t10 + t11;
      d[o + 4 * step] = t10 - t11;
      const z1 = (t12 + t13) * 0.707106781;
      d[o + 2 * step] = t13 + z1;
      d[o + 6 * step] = t13 - z1;
      t10 = t4 + t5;
      t11 = t5 + t6;
      t12 = t6 + t7;
      const z5 = (t10 - t12) * 0.382683433;
      const z2 = 0.5411961 * t10 + z5;
      const z4 = 1.306562965 * t12 + z5;
      const z3 = t11 * 0.707106781;
      const z11 = t7 + z3;
      const z13 = t7 - z3;
      d[o + 5 * step] = z13 + z2;
      d[o + 3 * step] = z13 - z2;
      d[o + step] = z11 + z4;
      d[o + 7 * step] = z11 - z4;
    }
  }
}

export function encodeJpeg(rgba: Uint8Array, width: number, height: number, quality = 80): Buffer {
  const luma = quantisation(LUMA_QT, quality);
  const chroma = quantisation(CHROMA_QT, quality);
  const out = new BitWriter(Math.max(4096, width * height));
  const word = (v: number) => out.raw([v >> 8, v & 0xff]);
  out.raw([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  out.raw([0xff, 0xdb, 0, 132, 0]);
  out.raw(luma.zigzag);
  out.byte(1);
  out.raw(chroma.zigzag);
  out.raw([0xff, 0xc0, 0, 17, 8]);
  word(height);
  word(width);
  out.raw([3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
  const specs: Array<[number, HuffmanSpec]> = [[0x00, DC_LUMA], [0x10, AC_LUMA], [0x01, DC_CHROMA], [0x11, AC_CHROMA]];
  out.raw([0xff, 0xc4]);
  word(2 + specs.reduce((n, [, s]) => n + 17 + s.symbols.length, 0));
  for (const [id, spec] of specs) {
    out.byte(id);
    out.raw(spec.counts);
    out.raw(spec.symbols);
  }
  out.raw([0xff, 0xda, 0, 12, 3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0]);

  const y = new Float64Array(256);
  const cb = new Float64Array(256);
  const cr = new Float64Array(256);
  const block = new Float64Array(64);
  const coefficients = new Int32Array(64);
  const predictions = [0, 0, 0];
  const encodeBlock = (component: number, divisors: Float64Array, dc: HuffmanTable, ac: HuffmanTable) => {
    let uniform = true;
    for (let i = 1; i < 64 && uniform; i++) uniform = block[i] === block[0];
    let dcValue: number;
    if (uniform) dcValue = Math.round((block[0] - 128) * 64 * divisors[0]);
    else {
      for (let i = 0; i < 64; i++) block[i] -= 128;
      fdct(block);
      dcValue = Math.round(block[0] * divisors[0]);
    }
    const diff = dcValue - predictions[component];
    predictions[component] = dcValue;
    const dcCat = category(diff);
    out.write(dc.code[dcCat], dc.length[dcCat]);
    if (dcCat) out.write(diff < 0 ? diff + (1 << dcCat) - 1 : diff, dcCat);
    if (uniform) {
      out.write(ac.code[0], ac.length[0]);
      return;
    }
    // Baseline Huffman tables code AC magnitudes up to 1023 (reached only near quality 100).
    for (let i = 0; i < 64; i++) coefficients[ZIGZAG[i]] = Math.max(-1023, Math.min(1023, Math.round(block[i] * divisors[i])));
    let run = 0;
    for (let k = 1; k < 64; k++) {
      const v = coefficients[k];
      if (v === 0) {
        run++;
        continue;
      }
      while (run >= 16) {
        out.write(ac.code[0xf0], ac.length[0xf0]);
        run -= 16;
      }
      const cat = category(v);
      const symbol = (run << 4) | cat;
      out.write(ac.code[symbol], ac.length[symbol]);
      out.write(v < 0 ? v + (1 << cat) - 1 : v, cat);
      run = 0;
    }
    if (run > 0) out.write(ac.code[0], ac.length[0]);
  };

  const words = rgba.byteOffset % 4 === 0 ? new Uint32Array(rgba.buffer, rgba.byteOffset, width * height) : new Uint32Array(Uint8Array.from(rgba).buffer);
  /** Whether the 16x16 pixels at (mx, my), all inside the picture, have one colour. */
  const flat = (mx: number, my: number): boolean => {
    if (mx + 16 > width || my + 16 > height) return false;
    const first = words[my * width + mx];
    for (let py = 0; py < 16; py++) {
      const row = (my + py) * width + mx;
      for (let px = 0; px < 16; px++) if (words[row + px] !== first) return false;
    }
    return true;
  };
  for (let my = 0; my < height; my += 16) {
    for (let mx = 0; mx < width; mx += 16) {
      if (flat(mx, my)) {
        // One colour: six uniform blocks, no per-pixel work.
        const p = (my * width + mx) * 4;
        const r = rgba[p], g = rgba[p + 1], b = rgba[p + 2];
        const values = [0.299 * r + 0.587 * g + 0.114 * b, -0.168736 * r - 0.331264 * g + 0.5 * b + 128, 0.5 * r - 0.418688 * g - 0.081312 * b + 128];
        for (let k = 0; k < 6; k++) {
          block.fill(values[k < 4 ? 0 : k - 3]);
          if (k < 4) encodeBlock(0, luma.divisors, TABLES.dcLuma, TABLES.acLuma);
          else encodeBlock(k - 3, chroma.divisors, TABLES.dcChroma, TABLES.acChroma);
        }
        continue;
      }
      for (let py = 0; py < 16; py++) {
        const row = Math.min(height - 1, my + py) * width;
        for (let px = 0; px < 16; px++) {
          const p = (row + Math.min(width - 1, mx + px)) * 4;
          const r = rgba[p], g = rgba[p + 1], b = rgba[p + 2];
          const i = py * 16 + px;
          y[i] = 0.299 * r + 0.587 * g + 0.114 * b;
          cb[i] = -0.168736 * r - 0.331264 * g + 0.5 * b + 128;
          cr[i] = 0.5 * r - 0.418688 * g - 0.081312 * b + 128;
        }
      }
      for (let k = 0; k < 4; k++) {
        const bx = (k & 1) * 8;
        const by = (k >> 1) * 8;
        for (let i = 0; i < 64; i++) block[i] = y[(by + (i >> 3)) * 16 + bx + (i & 7)];
        encodeBlock(0, luma.divisors, TABLES.dcLuma, TABLES.acLuma);
      }
      for (let component = 1; component <= 2; component++) {
        const plane = component === 1 ? cb : cr;
        for (let i = 0; i < 64; i++) {
          const at = (i >> 3) * 32 + (i & 7) * 2;
          block[i] = (plane[at] + plane[at + 1] + plane[at + 16] + plane[at + 17]) / 4;
        }
        encodeBlock(component, chroma.divisors, TABLES.dcChroma, TABLES.acChroma);
      }
    }
  }
  out.flush();
  out.raw([0xff, 0xd9]);
  return out.bytes.subarray(0, out.length);
}
