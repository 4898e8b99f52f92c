/**
 * Logcat ring buffer in `threadtime` format.
 *
 * Ambient system chatter is generated lazily for the time that passed since
 * the last read, so the log "grows" while the device is on without timers.
 * Device events (boot, installs, launches) append their own lines. Followers (`logcat` without `-d`) are
 * told at once when a line is added.
 */

type LogPriority = 'V' | 'D' | 'I' | 'W' | 'E' | 'F';

interface LogEntry {
  timeMs: number;
  pid: number;
  tid: number;
  priority: LogPriority;
  tag: string;
  message: string;
}

const AMBIENT: Array<Omit<LogEntry, 'timeMs'>> = [
  { pid: 1534, tid: 1621, priority: 'I', tag: 'ActivityManager', message: 'Killing 8321:com.google.android.apps.photos/u0a187 (adj 985): empty #17' },
  { pid: 2011, tid: 2011, priority: 'D', tag: 'WifiStateMachine', message: 'rssi=-54 linkspeed=433 freq=5180' },
  { pid: 1534, tid: 1598, priority: 'W', tag: 'BatteryStatsService', message: 'Timeout reading modem stats' },
  { pid: 964, tid: 1002, priority: 'I', tag: 'chatty', message: 'uid=1000(system) Binder:964_2 identical 3 lines' },
  { pid: 1534, tid: 2677, priority: 'D', tag: 'ConnectivityService', message: 'NetReassign [no changes]' },
  { pid: 3120, tid: 3188, priority: 'I', tag: 'GmsCoreXrpcWrapper', message: 'Returning a channel provider with trafficStatsTag=12803' },
  { pid: 1534, tid: 1592, priority: 'I', tag: 'PowerManagerService', message: 'Waking up from Dozing (uid=1000 reason=WAKE_REASON_APPLICATION details=android.server.wm:SCREEN_ON)...' },
  { pid: 612, tid: 612, priority: 'E', tag: 'android.hardware.power-service', message: 'Failed to read /sys/class/power_supply/battery/charge_type' },
  { pid: 2845, tid: 2845, priority: 'D', tag: 'KeyguardUpdateMonitor', message: 'handleBatteryUpdate' },
  { pid: 1534, tid: 1645, priority: 'I', tag: 'JobScheduler', message: 'Job com.google.android.gms/.chimera.GmsIntentOperationService finished' },
];

/** Ambient line every this many milliseconds of device uptime. */
const AMBIENT_INTERVAL_MS = 1500;
const CAPACITY = 5000;

export class LogBuffer {
  private entries: LogEntry[] = [];
  /** Lines that left the ring (capacity, clear, reboot): entries[0] has the absolute position `removed`. */
  private removed = 0;
  private generatedUntil: number;
  private ambientIndex = 0;
  private readonly followers = new Set<() => void>();

  constructor(private readonly timezone: string, bootAtMs: number) {
    this.generatedUntil = bootAtMs;
  }

  /** Restarts the buffer at boot (logd's RAM buffers do not survive a reboot). */
  reset(bootAtMs: number): void {
    this.removed += this.entries.length;
    this.entries = [];
    this.generatedUntil = bootAtMs;
    this.add({ timeMs: bootAtMs, pid: 0, tid: 0, priority: 'I', tag: 'kernel', message: 'Booting Linux on physical CPU 0x0000000000 [0x412fd050]' });
    this.add({ timeMs: bootAtMs + 900, pid: 1, tid: 1, priority: 'I', tag: 'init', message: 'init second stage started!' });
    this.add({ timeMs: bootAtMs + 2400, pid: 1534, tid: 1534, priority: 'I', tag: 'SystemServer', message: 'Entered the Android system server!' });
  }

  add(entry: LogEntry): void {
    this.entries.push(entry);
    if (this.entries.length > CAPACITY) {
      this.removed += this.entries.length - CAPACITY;
      this.entries.splice(0, this.entries.length - CAPACITY);
    }
    for (const notify of this.followers) notify();
  }

  /** Calls `notify` after every added line until the returned function is called. */
  follow(notify: () => void): () => void {
    this.followers.add(notify);
    return () => this.followers.delete(notify);
  }

  log(priority: LogPriority, tag: string, message: string, pid = 1534, tid = 1590, timeMs = Date.now()): void {
    this.fillAmbient(timeMs);
    this.add({ timeMs, pid, tid, priority, tag, message });
  }

  clear(): void {
    this.fillAmbient(Date.now());
    this.removed += this.entries.length;
    this.entries = [];
  }

  /** `logcat -d [-t N]` output in threadtime format. */
  dump(tail?: number, now = Date.now()): string {
    this.fillAmbient(now);
    const list = tail !== undefined ? this.entries.slice(-tail) : this.entries;
    return '--------- beginning of main\n' + list.map((e) => this.format(e) + '\n').join('');
  }

  /** Lines added at or after absolute position `position` (for streaming logcat); returns the next position. */
  since(position: number, now = Date.now()): { lines: string[]; next: number } {
    this.fillAmbient(now);
    const start = Math.max(0, Math.min(position - this.removed, this.entries.length));
    return { lines: this.entries.slice(start).map((e) => this.format(e)), next: this.end };
  }

  get size(): number {
    return this.entries.length;
  }

  /** Absolute position after the newest line (positions keep counting when old lines leave the ring). */
  get end(): number {
    return this.removed + this.entries.length;
  }

  format(e: LogEntry): string {
    return `${this.timestamp(e.timeMs)} ${String(e.pid).padStart(5)} ${String(e.tid).padStart(5)} ${e.priority} ${e.tag.padEnd(8)}: ${e.message}`;
  }

  private fillAmbient(now: number): void {
    while (this.generatedUntil + AMBIENT_INTERVAL_MS <= now) {
      this.generatedUntil += AMBIENT_INTERVAL_MS;
      const template = AMBIENT[this.ambientIndex++ % AMBIENT.length];
      // Jitter backwards only, so no line is stamped later than the moment it became visible.
      this.add({ ...template, timeMs: this.generatedUntil - ((this.ambientIndex * 137) % 900) });
    }
  }

  /** Device-local `MM-DD HH:MM:SS.mmm` (logcat has no year or zone by default). */
  private timestamp(ms: number): string {
    const parts = new Intl.DateTimeFormat('en-US', {
      timeZone: this.timezone, month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23',
    }).formatToParts(new Date(ms));
    const get = (t: string) => parts.find((p) => p.type === t)?.value ?? '00';
    return `${get('month')}-${get('day')} ${get('hour')}:${get('minute')}:${get('second')}.${String(((ms % 1000) + 1000) % 1000).padStart(3, '0')}`;
  }
}
