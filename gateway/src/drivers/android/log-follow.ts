/**
 * Following the device log: `logcat -v threadtime -T 1` keeps the stream open and prints each line as the
 * device logs it. `-T 1` starts at the newest line instead of replaying the whole ring buffer (megabytes) on
 * every (re)connect; that one line is skipped when it is the last line already delivered.
 */
import type { Duplex } from 'node:stream';
import type { DeviceClient } from '@devicefarmer/adbkit';
import type { LogFollower, LogStream } from '../device-driver';
import { asCommandError } from './shell';

const LOGCAT_FOLLOW_COMMAND = 'logcat -v threadtime -T 1';

/** Buffer separators (`--------- beginning of main`) are not log lines. */
const SEPARATOR = /^-{9} (beginning of|switch to) /;

/**
 * @param lastDelivered the last line an earlier stream of this device delivered (to skip the replayed one)
 */
export function followLogcat(device: DeviceClient, follower: LogFollower, lastDelivered: string | undefined): LogStream {
  let stopped = false;
  let ended = false;
  let stream: Duplex | undefined;
  let partial = '';
  let first = true;
  const end = (error?: Error) => {
    if (ended) return;
    ended = true;
    if (!stopped) follower.end(error);
  };
  device.shell(LOGCAT_FOLLOW_COMMAND).then((s: Duplex) => {
    stream = s;
    if (stopped) {
      s.destroy();
      return;
    }
    s.setEncoding('utf8');
    s.on('data', (chunk: string) => {
      if (stopped) return;
      const parts = (partial + chunk).replace(/\r/g, '').split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        if (line === '' || SEPARATOR.test(line)) continue;
        if (first) {
          first = false;
          if (line === lastDelivered) continue;
        }
        follower.line(line);
      }
    });
    s.on('error', (err: Error) => end(asCommandError(device.serial, err)));
    s.on('end', () => end());
    s.on('close', () => end());
  }, (err: unknown) => end(asCommandError(device.serial, err)));
  return {
    stop() {
      stopped = true;
      stream?.destroy();
    },
  };
}
