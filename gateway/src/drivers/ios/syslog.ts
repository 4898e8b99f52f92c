/**
 * com.apple.syslog_relay: every line the device logs from the moment we connect, each ending in "\n\0". The
 * relay keeps no history, so the driver follows it while the device is Ready and keeps the latest lines.
 */
import type { LogFollower, LogStream } from '../device-driver';
import { type DeviceLink, openServiceSocket } from './services';

export function followSyslog(link: DeviceLink, follower: LogFollower): LogStream {
  let stopped = false;
  let destroy: () => void = () => undefined;
  openServiceSocket(link, 'com.apple.syslog_relay').then((socket) => {
    if (stopped) return void socket.destroy();
    destroy = () => socket.destroy();
    let pending = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      pending += chunk;
      const parts = pending.split('\0');
      pending = parts.pop() ?? '';
      for (const part of parts) {
        const line = part.replace(/\n$/, '');
        if (line) follower.line(line);
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => { if (!stopped) follower.end(); });
  }, (err: Error) => { if (!stopped) follower.end(err); });
  return { stop: () => { stopped = true; destroy(); } };
}

/** The latest `capacity` lines of a followed log. */
export class LogRing {
  private readonly lines: string[] = [];
  constructor(private readonly capacity = 2_000) {}

  push(line: string): void {
    this.lines.push(line);
    if (this.lines.length > this.capacity) this.lines.splice(0, this.lines.length - this.capacity);
  }

  tail(maxLines: number): string {
    return this.lines.slice(-Math.max(0, maxLines)).join('\n');
  }
}
