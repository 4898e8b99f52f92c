/**
 * The display's rotation as the input system applies it to the touch screen, from `dumpsys input`: Android 12 and
 * older print `SurfaceOrientation: 1` (quarter turns), 13 and 14 `InputDeviceOrientation: 1`, 15 and later
 * `InputDeviceOrientation: Rotation90`. It follows every cause of a turn (the user's rotation setting, the
 * accelerometer, an app that asks for landscape), which `settings get system user_rotation` does not. A shell
 * offers no event for it, so a running capture asks now and then (RotationWatch): one short command a second, only
 * while someone watches.
 */
import type { DeviceClient } from '@devicefarmer/adbkit';
import { runShell } from '../shell';

/** The command: only the orientation lines leave the device (the whole dump is tens of kilobytes). */
export const ROTATION_COMMAND = "dumpsys input | grep -E 'SurfaceOrientation|InputDeviceOrientation'";

/** Degrees (0, 90, 180, 270) of the first touch screen's orientation, or undefined when the text names none. */
export function parseInputRotation(text: string): number | undefined {
  const m = /(?:SurfaceOrientation|InputDeviceOrientation):\s*(?:Rotation|ROTATION_)?(\d+)/.exec(text);
  if (!m) return undefined;
  const value = Number(m[1]);
  if (value >= 0 && value <= 3) return value * 90;
  return value === 90 || value === 180 || value === 270 ? value : undefined;
}

export async function readDisplayRotation(device: DeviceClient): Promise<number | undefined> {
  return parseInputRotation(await runShell(device, ROTATION_COMMAND, 10_000));
}

/** How often a running capture asks for the rotation. */
const ROTATION_POLL_MS = 1_000;

/**
 * Asks for the rotation every `intervalMs` until stopped and calls `turned` once it differs from `current`. A
 * device whose dump names no orientation is not asked again; a failed ask (device busy) is tried at the next tick.
 */
export class RotationWatch {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly read: () => Promise<number | undefined>, private readonly current: number,
    private readonly turned: (rotation: number) => void, private readonly intervalMs = ROTATION_POLL_MS,
  ) {
    this.schedule();
  }

  /** Asks at once (after a rotation was requested) rather than at the next tick. */
  check(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    void this.ask();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.ask();
    }, this.intervalMs);
    this.timer.unref();
  }

  private async ask(): Promise<void> {
    let rotation: number | undefined;
    try {
      rotation = await this.read();
      if (rotation === undefined) return; // this device does not say: nothing to follow
    } catch {
      // The device did not answer this time.
    }
    if (this.stopped) return;
    if (rotation !== undefined && rotation !== this.current) {
      this.stop();
      this.turned(rotation);
      return;
    }
    this.schedule();
  }
}
