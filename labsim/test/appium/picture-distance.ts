/**
 * How far apart two pictures of a screen are, whatever their encoding (JPEG or PNG) and size: both are sampled on
 * the same grid of points across the picture, and the mean difference of the colour channels (0..255) is returned.
 * A JPEG at half size of the same screen is a few units off; another screen is tens of units off.
 */
import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';

interface Rgba { width: number; height: number; data: Uint8Array }

export function decodePicture(bytes: Buffer): Rgba {
  if (bytes.readUInt32BE(0) === 0x89504e47) return PNG.sync.read(bytes);
  return jpeg.decode(bytes, { formatAsRGBA: true, maxMemoryUsageInMB: 256 });
}

export function pictureDistance(a: Buffer, b: Buffer, grid = 48): number {
  const [pa, pb] = [decodePicture(a), decodePicture(b)];
  let sum = 0;
  let count = 0;
  for (let gy = 0; gy < grid; gy++) {
    for (let gx = 0; gx < grid; gx++) {
      const at = (p: Rgba) => (Math.floor(((gy + 0.5) / grid) * p.height) * p.width + Math.floor(((gx + 0.5) / grid) * p.width)) * 4;
      const [ia, ib] = [at(pa), at(pb)];
      for (let c = 0; c < 3; c++) sum += Math.abs(pa.data[ia + c] - pb.data[ib + c]);
      count += 3;
    }
  }
  return sum / count;
}
