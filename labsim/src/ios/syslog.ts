/**
 * The device's system log as syslog_relay streams it: `MMM dd HH:MM:SS host process(image)[pid] <Level>: text`
 * in device local time (device-data.md 2.5). Lines exist only while someone listens, like a live relay; the
 * device adds background chatter about once a second so a listener always sees traffic.
 */
import { EventEmitter } from 'node:events';

type SyslogLevel = 'Notice' | 'Error' | 'Warning' | 'Info' | 'Debug' | 'Fault';

interface SyslogEntry {
  process: string;
  image?: string;
  pid: number;
  level: SyslogLevel;
  message: string;
}

const CHATTER: SyslogEntry[] = [
  { process: 'SpringBoard', image: 'FrontBoard', pid: 58, level: 'Notice', message: 'Received active interface orientation update' },
  { process: 'runningboardd', image: 'RunningBoard', pid: 33, level: 'Info', message: 'Acquiring assertion targeting system' },
  { process: 'kernel', pid: 0, level: 'Notice', message: 'AppleSmartBattery: charge level update' },
  { process: 'wifid', image: 'WiFiPolicy', pid: 41, level: 'Notice', message: '__WiFiLQAMgrLogStats(Lab-WiFi:Stationary): Rssi: -48 {0 0} Snr: 42' },
  { process: 'locationd', pid: 67, level: 'Debug', message: '{"msg":"client authorization status", "Client":"com.apple.weather"}' },
];

export class IosSyslog extends EventEmitter {
  private timer: NodeJS.Timeout | null = null;
  private chatterIndex = 0;

  constructor(private readonly hostName: () => string, private readonly timeZone: string, private readonly chatterMs = 1000) {
    super();
  }

  /** Formats and emits one line (without the relay's terminator). */
  log(entry: SyslogEntry, at = new Date()): string {
    const proc = entry.image ? `${entry.process}(${entry.image})` : entry.process;
    const line = `${syslogTimestamp(at, this.timeZone)} ${this.hostName()} ${proc}[${entry.pid}] <${entry.level}>: ${entry.message}`;
    this.emit('line', line);
    return line;
  }

  subscribe(listener: (line: string) => void): () => void {
    this.on('line', listener);
    this.ensureChatter();
    return () => {
      this.off('line', listener);
      this.ensureChatter();
    };
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private ensureChatter(): void {
    const wanted = this.listenerCount('line') > 0;
    if (wanted && !this.timer) {
      this.timer = setInterval(() => this.log(CHATTER[this.chatterIndex++ % CHATTER.length]), this.chatterMs);
      this.timer.unref();
    } else if (!wanted) {
      this.stop();
    }
  }
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `Mar 11 14:22:05` (no year; day padded with a space like BSD syslog) in the device's time zone. */
function syslogTimestamp(at: Date, timeZone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone, month: 'numeric', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' })
      .formatToParts(at).map((p) => [p.type, p.value]),
  );
  return `${MONTHS[Number(parts.month) - 1]} ${String(parts.day).padStart(2, ' ')} ${parts.hour}:${parts.minute}:${parts.second}`;
}
