/** Device log over adb: `logcat -d -v threadtime -t <n>` (dump and exit, bounded). */
import type { DeviceClient } from '@devicefarmer/adbkit';
import { runShell } from './shell';

const MAX_LOG_LINES = 100_000;

export async function readLogcat(device: DeviceClient, maxLines: number): Promise<string> {
  const n = Math.min(MAX_LOG_LINES, Math.max(1, Math.floor(Number.isFinite(maxLines) && maxLines > 0 ? maxLines : 500)));
  return runShell(device, `logcat -d -v threadtime -t ${n}`);
}
