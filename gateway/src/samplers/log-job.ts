/**
 * `log` rows: the device log followed as a stream, one row per line, rate-bounded per device. Lines over the
 * bound are dropped and counted; once per second a note row says how many (like logcat's own `chatty` lines).
 * A stream that ends (device busy, adb hiccup) is reopened with growing delays while the job runs. A row's time
 * is when the gateway received the line: logcat stamps carry no year or zone (the line keeps its own stamp).
 */
import type { Logger } from '@devicelab/shared';
import type { DeviceSampling, LogStream } from '../drivers/device-driver';
import { LogRateLimit } from './log-rate-limit';
import type { MetricsSink } from './metrics-sink';

export interface LogJob {
  /** Lines dropped by the rate bound since the job started. */
  readonly dropped: number;
  stop(): void;
}

export function droppedNote(count: number, perSecond: number): string {
  return `--------- devicelab gateway dropped ${count} log line${count === 1 ? '' : 's'} (limit ${perSecond}/s)`;
}

export function startLogJob(id: string, sampling: DeviceSampling, sink: MetricsSink, perSecond: number, logger: Logger): LogJob {
  const limit = new LogRateLimit(perSecond);
  let stopped = false;
  let stream: LogStream | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let retryMs = 1_000;
  const record = (text: string) => sink.record({ vendorUniqueIdentifier: id, table: 'log', time: Date.now(), fields: { log: text } });
  const flushNote = () => {
    const n = limit.takeDroppedNote();
    if (n > 0) record(droppedNote(n, perSecond));
  };
  const noteTimer = setInterval(flushNote, 1_000);
  noteTimer.unref();
  const retryLater = () => {
    retryTimer = setTimeout(open, retryMs);
    retryMs = Math.min(30_000, retryMs * 2);
  };
  const open = () => {
    if (stopped) return;
    try {
      stream = sampling.followLog(id, {
        line: (text) => {
          retryMs = 1_000;
          if (limit.take()) record(text);
        },
        end: (error) => {
          stream = undefined;
          if (stopped) return;
          logger.debug({ device: id, err: error, retryMs }, 'device log stream ended');
          retryLater();
        },
      });
    } catch (err) {
      logger.debug({ device: id, err }, 'device log stream could not start');
      retryLater();
    }
  };
  open();
  return {
    get dropped() {
      return limit.dropped;
    },
    stop() {
      stopped = true;
      clearInterval(noteTimer);
      if (retryTimer) clearTimeout(retryTimer);
      stream?.stop();
      flushNote();
    },
  };
}
