/**
 * Small system services: battery, settings, window manager.
 * Each owns a bit of device state and renders the real command output.
 */
import { randomBytes } from 'node:crypto';
import type { AndroidDeviceSpec } from './spec';
import type { ToolIO } from './tool-io';

export interface BatteryState {
  level: number;
  usbPowered: boolean;
  /** Optional explicit BatteryManager status (1..5); derived from power and level when unset. */
  status?: number;
}

/** Battery with slow drift (<= 1 %/min, device-data.md section 4). */
export class Battery {
  private level: number;
  private usbPowered: boolean;
  private status: number | undefined;
  private lastTick = Date.now();

  constructor(initial: BatteryState) {
    this.level = initial.level;
    this.usbPowered = initial.usbPowered;
    this.status = initial.status;
  }

  set(state: Partial<BatteryState>): void {
    this.tick();
    if (state.level !== undefined) this.level = Math.max(0, Math.min(100, Math.round(state.level)));
    if (state.usbPowered !== undefined) this.usbPowered = state.usbPowered;
    if ('status' in state) this.status = state.status;
  }

  get(): Required<BatteryState> {
    this.tick();
    const derived = this.usbPowered ? (this.level >= 100 ? 5 : 2) : 3;
    return { level: this.level, usbPowered: this.usbPowered, status: this.status ?? derived };
  }

  /** Charging gains 1 % per 2 minutes, discharging loses 1 % per 4 minutes. */
  private tick(): void {
    const now = Date.now();
    const minutes = (now - this.lastTick) / 60_000;
    const step = this.usbPowered ? Math.floor(minutes / 2) : Math.floor(minutes / 4);
    if (step > 0) {
      this.level = Math.max(0, Math.min(100, this.level + (this.usbPowered ? step : -step)));
      this.lastTick = now;
    }
  }

  dumpsys(sdk: number): string {
    const b = this.get();
    const voltage = 3500 + b.level * 7;
    const lines = [
      'Current Battery Service state:',
      '  AC powered: false',
      `  USB powered: ${b.usbPowered}`,
      '  Wireless powered: false',
    ];
    if (sdk >= 33) lines.push('  Dock powered: false');
    lines.push(`  Max charging current: ${b.usbPowered ? 500000 : 0}`);
    lines.push(`  Max charging voltage: ${b.usbPowered ? 5000000 : 0}`);
    lines.push(`  Charge counter: ${Math.round(4355000 * (b.level / 100))}`);
    lines.push(`  status: ${b.status}`, '  health: 2', '  present: true', `  level: ${b.level}`, '  scale: 100');
    lines.push(`  voltage: ${voltage}`, `  temperature: ${b.usbPowered ? 298 : 276}`, '  technology: Li-ion');
    if (sdk >= 34) lines.push(`  Charging state: ${b.status === 2 ? 4 : 1}`, '  Charging policy: 2', '  Capacity level: 2');
    return lines.join('\n') + '\n';
  }
}

type Namespace = 'global' | 'secure' | 'system';

export class Settings {
  private readonly values: Record<Namespace, Map<string, string>>;
  /** Told of every value written or deleted (the services that act on a setting, e.g. the display's rotation). */
  onChange: (ns: Namespace, key: string) => void = () => undefined;

  constructor(spec: AndroidDeviceSpec) {
    this.values = {
      global: new Map([
        ['device_name', spec.deviceName], ['adb_enabled', '1'], ['airplane_mode_on', '0'], ['stay_on_while_plugged_in', '0'],
        ['wifi_on', '1'], ['bluetooth_on', '1'], ['development_settings_enabled', '1'], ['package_verifier_enable', '1'],
      ]),
      secure: new Map([
        ['bluetooth_address', spec.bluetoothMac], ['bluetooth_name', spec.deviceName],
        ['android_id', randomBytes(8).toString('hex')], ['default_input_method', 'com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME'],
      ]),
      system: new Map([
        ['screen_brightness', '102'], ['screen_off_timeout', '30000'], ['font_scale', '1.0'], ['accelerometer_rotation', '0'], ['user_rotation', '0'],
      ]),
    };
  }

  get(ns: Namespace, key: string): string | undefined {
    return this.values[ns].get(key);
  }

  set(ns: Namespace, key: string, value: string): void {
    this.values[ns].set(key, value);
    this.onChange(ns, key);
  }

  command(args: string[], io: ToolIO): number {
    const [verb, ns, key, ...value] = args.filter((a, i) => a !== '--user' && args[i - 1] !== '--user');
    if (!['global', 'secure', 'system'].includes(ns ?? '')) {
      io.err(`Invalid namespace '${ns ?? ''}'\n`);
      return 255;
    }
    const table = this.values[ns as Namespace];
    if (verb === 'get' && key) io.out(`${table.get(key) ?? 'null'}\n`);
    else if (verb === 'put' && key && value.length) this.set(ns as Namespace, key, value.join(' '));
    else if (verb === 'delete' && key) {
      io.out(`Deleted ${table.delete(key) ? 1 : 0} rows\n`);
      this.onChange(ns as Namespace, key);
    }
    else if (verb === 'list') io.out([...table].map(([k, v]) => `${k}=${v}\n`).join(''));
    else {
      io.err('usage:  settings [--user <USER_ID> | current] get namespace key\n');
      return 255;
    }
    return 0;
  }
}

export class WindowManager {
  private overrideSize: string | null = null;
  private overrideDensity: number | null = null;

  constructor(private readonly spec: AndroidDeviceSpec) {}

  /** What apps currently see (override if set). */
  effectiveSize(): { width: number; height: number } {
    const [w, h] = (this.overrideSize ?? `${this.spec.screen.width}x${this.spec.screen.height}`).split('x').map(Number);
    return { width: w, height: h };
  }

  command(args: string[], io: ToolIO): number {
    const [sub, value] = args;
    if (sub === 'size') {
      if (value === 'reset') this.overrideSize = null;
      else if (value && /^\d+x\d+$/.test(value)) this.overrideSize = value;
      else if (value) {
        io.err(`Error: bad size ${value}\n`);
        return 255;
      } else {
        io.out(`Physical size: ${this.spec.screen.width}x${this.spec.screen.height}\n`);
        if (this.overrideSize) io.out(`Override size: ${this.overrideSize}\n`);
      }
      return 0;
    }
    if (sub === 'density') {
      if (value === 'reset') this.overrideDensity = null;
      else if (value && /^\d+$/.test(value)) this.overrideDensity = Number(value);
      else {
        io.out(`Physical density: ${this.spec.screen.density}\n`);
        if (this.overrideDensity) io.out(`Override density: ${this.overrideDensity}\n`);
      }
      return 0;
    }
    io.err(`Error: unknown command '${sub ?? ''}'\n`);
    return 255;
  }
}

export interface InputEvent {
  timeMs: number;
  args: string[];
}
