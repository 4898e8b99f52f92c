/**
 * The window manager's rotation policy for the settings a shell can write: with auto-rotate off
 * (`accelerometer_rotation` 0) the display takes `user_rotation` (0-3); with it on it follows the accelerometer,
 * and a simulated phone stands upright. Something else may still turn the display afterwards (an app, a UiAutomator
 * call set `screen.rotation` directly), as on a device.
 */
import type { DeviceScreen } from './device-screen';

export function followRotationSettings(get: (key: string) => string | undefined, screen: DeviceScreen): void {
  if (get('accelerometer_rotation') === '1') {
    screen.rotation = 0;
    return;
  }
  const quarter = Number(get('user_rotation') ?? '0');
  if (quarter === 0 || quarter === 1 || quarter === 2 || quarter === 3) screen.rotation = quarter;
}

export const ROTATION_SETTINGS = new Set(['user_rotation', 'accelerometer_rotation']);
