/** The display's rotation read from `dumpsys input` lines as Android releases print them. */
import { parseInputRotation } from '../../src/drivers/android/screen/display-rotation';

test('each release\'s orientation line gives degrees; a dump without one gives nothing', () => {
  expect(parseInputRotation('      SurfaceOrientation: 1\n')).toBe(90);
  expect(parseInputRotation('      InputDeviceOrientation: 3\n')).toBe(270);
  expect(parseInputRotation('InputDeviceOrientation: Rotation180\nInputDeviceOrientation: Rotation0')).toBe(180);
  expect(parseInputRotation('      SurfaceOrientation: 0\n')).toBe(0);
  expect(parseInputRotation('Viewport INTERNAL: displayId=0, orientation=1\n')).toBeUndefined();
  expect(parseInputRotation('')).toBeUndefined();
});
