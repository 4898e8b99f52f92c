/** The simulated screens' JPEG encoder, decoded by an independent decoder (jpeg-js). */
import * as jpeg from 'jpeg-js';
import { DeviceScreen } from '../src/android/screen';
import { encodeJpeg } from '../src/android/screen/jpeg-encoder';

function meanError(a: Uint8Array, b: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) if (i % 4 !== 3) sum += Math.abs(a[i] - b[i]);
  return sum / ((a.length / 4) * 3);
}

it('encodes a screen (flat areas and text) that decodes to the same picture, at any size', () => {
  const screen = new DeviceScreen({
    width: 720, height: 1600, density: 280, launcherPackage: 'com.android.launcher3',
    installed: () => ['com.android.chrome', 'com.android.settings'].map((packageName) => ({ packageName, launchable: true, apkHostPath: null, stamp: '1' })),
    clock: () => '09:41', battery: () => ({ level: 64, charging: true }),
  });
  screen.launch('com.android.chrome');
  screen.typeText('Hello, screen');
  const full = jpeg.decode(screen.jpeg(85), { formatAsRGBA: true });
  expect([full.width, full.height]).toEqual([720, 1600]);
  expect(meanError(full.data, screen.rgba())).toBeLessThan(3);
  for (const [w, h] of [[361, 801], [17, 9]]) {
    const decoded = jpeg.decode(screen.jpeg(85, w, h), { formatAsRGBA: true });
    expect([decoded.width, decoded.height]).toEqual([w, h]);
  }
});

it('encodes detailed pictures and every quality from 1 to 100 into valid JPEG', () => {
  const width = 203;
  const height = 61;
  const rgba = Buffer.alloc(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      rgba.set([(x * 5) & 0xff, (y * 9) & 0xff, ((x ^ y) * 3) & 0xff, 255], i);
    }
  }
  for (const quality of [1, 10, 50, 80, 95, 100]) {
    const decoded = jpeg.decode(encodeJpeg(rgba, width, height, quality), { formatAsRGBA: true });
    expect([decoded.width, decoded.height]).toEqual([width, height]);
    if (quality >= 80) expect(meanError(decoded.data, rgba)).toBeLessThan(12);
  }
});
