/**
 * The state of a simulated Cambrionix hub (Universal firmware, e.g. PP8S): per-port mode, attachment, charge
 * timing and a current model, plus the supply rail, uptime and the rebooted flag. It renders the CLI answers
 * of testbench.md 2.2; `cli-terminal.ts` does the byte-level framing.
 */

export type PortMode = 'c' | 's' | 'b' | 'o';

/** What the hub sees of the device on a port: whether one is attached and its battery level. */
export interface PortLoad {
  attached(): boolean;
  /** Battery percent 0-100 (a full battery draws only a trickle). */
  batteryLevel(): number;
}

interface SimPort {
  mode: PortMode;
  profile: number;
  load?: PortLoad;
  /** When the current charge started (epoch ms), undefined when not charging. */
  chargeStartedAt?: number;
  /** Set when an attached device went away while the port was powered (the `T` flag). */
  theft: boolean;
  wasAttached: boolean;
}

export interface HubModelOptions {
  serial: string;
  ports?: number;
  model?: string;
  firmware?: string;
  /** Mode of every port after power-up / reboot (sync hubs come up in `s`). */
  defaultMode?: PortMode;
}

export class CliError extends Error {
  constructor(readonly code: number, text: string) {
    super(text);
  }
}

export class CambrionixHubModel {
  readonly serial: string;
  readonly portCount: number;
  readonly model: string;
  readonly firmware: string;
  private ports: SimPort[] = [];
  private bootedAt = Date.now();
  private rebooted = false;
  private fiveVoltMin = 5.1;
  private fiveVoltMax = 5.1;
  private readonly defaultMode: PortMode;
  /** Called after a port's mode changed (the world plugs or unplugs the device behind it). */
  onModeChange: (port: number, mode: PortMode) => void = () => undefined;

  constructor(options: HubModelOptions) {
    this.serial = options.serial;
    this.portCount = options.ports ?? 8;
    this.model = options.model ?? `PP${this.portCount}S`;
    this.firmware = options.firmware ?? '1.68';
    this.defaultMode = options.defaultMode ?? 's';
    for (let i = 0; i < this.portCount; i++) {
      this.ports.push({ mode: this.defaultMode, profile: 0, theft: false, wasAttached: false });
    }
  }

  connect(port: number, load: PortLoad): void {
    this.port(port).load = load;
  }

  mode(port: number): PortMode {
    return this.port(port).mode;
  }

  /** Power cycle: every port back to the default mode, `R` set until `crf`. */
  powerUp(): void {
    this.bootedAt = Date.now();
    this.rebooted = true;
    for (let p = 1; p <= this.portCount; p++) this.setMode(p, this.defaultMode, 0);
  }

  /** One CLI command line to its answer lines; CliError for `*Ennn` answers. */
  execute(line: string): string[] {
    const [name, ...args] = line.trim().split(/\s+/);
    switch (name.toLowerCase()) {
      case '':
        return [];
      case 'id':
        return [`mfr:cambrionix,mode:main,hw:${this.model},hwid:0x13,fw:${this.firmware},bl:0.15,sn:${this.serial},group:-,fc:un`];
      case 'system':
        return [`cambrionix ${this.model} ${this.portCount} Port USB Charge+Sync`, `Hardware: ${this.model}`,
          `Firmware: ${this.firmware}`, 'Compiled: Feb 14 2017 17:30:26', 'Group: -', 'Panel ID: Absent'];
      case 'limits':
        return ['5V Min:   4.50', '5V Max:   5.58', '12V Min:  9.59', '12V Max: 14.50', 'Temperature (C): 75.0'];
      case 'health':
        return this.health();
      case 'state':
        return this.state(args);
      case 'mode':
        this.modeCommand(args);
        return [];
      case 'crf':
        this.rebooted = false;
        return [];
      case 'cef':
        return [];
      default:
        throw new CliError(100, `Unknown command '${name}'`);
    }
  }

  private health(): string[] {
    const now = this.fiveVolt();
    this.fiveVoltMin = Math.min(this.fiveVoltMin, now);
    this.fiveVoltMax = Math.max(this.fiveVoltMax, now);
    return [
      `5V Now:   ${now.toFixed(2)}`, `5V Min:   ${this.fiveVoltMin.toFixed(2)}`, `5V Max:   ${this.fiveVoltMax.toFixed(2)}`,
      '5V Flags: ', '12V Now:  12.05', '12V Min:  12.01', '12V Max:  12.09', '12V Flags: ',
      'Temperature Now: 31.5', `Uptime: ${Math.floor((Date.now() - this.bootedAt) / 1000)}`,
      `Rebooted: ${this.rebooted ? 1 : 0}`, 'Error Flags: ',
    ];
  }

  private state(args: string[]): string[] {
    const ports = args.length > 0 ? [this.portArg(args[0])] : Array.from({ length: this.portCount }, (_, i) => i + 1);
    return ports.map((p) => {
      const port = this.port(p);
      const attached = this.attached(port);
      const flags = [this.rebooted ? 'R' : '', attached ? 'A' : 'D', port.theft ? 'T' : '', this.modeFlag(port)]
        .filter(Boolean).join(' ');
      const charging = port.chargeStartedAt !== undefined && attached && port.mode === 'c'
        ? Math.floor((Date.now() - port.chargeStartedAt) / 1000) : 0;
      const mA = String(this.milliamps(port)).padStart(4, '0');
      return `${String(p).padStart(2, ' ')}, ${mA}, ${flags}, ${port.profile}, ${charging}, x, 0.00`;
    });
  }

  private modeCommand(args: string[]): void {
    const letter = (args[0] ?? '').toLowerCase();
    if (!['c', 's', 'b', 'o'].includes(letter)) {
      throw new CliError(421, 'Invalid mode. Expected: c (charge), s (sync), b (biassed), or o (off)');
    }
    const profile = args[2] !== undefined ? Number(args[2]) : 0;
    if (!Number.isInteger(profile) || profile < 0 || profile > 6) throw new CliError(422, 'Invalid profile. Expected 0..6');
    if (args[1] === undefined) {
      for (let p = 1; p <= this.portCount; p++) this.setMode(p, letter as PortMode, profile);
    } else {
      this.setMode(this.portArg(args[1]), letter as PortMode, profile);
    }
  }

  private setMode(p: number, mode: PortMode, profile: number): void {
    const port = this.port(p);
    const changed = port.mode !== mode;
    port.mode = mode;
    port.profile = profile;
    port.theft = false;
    port.chargeStartedAt = mode === 'c' ? Date.now() : undefined;
    if (changed) this.onModeChange(p, mode);
  }

  private portArg(text: string): number {
    const p = Number(text);
    if (!Number.isInteger(p) || p < 1 || p > this.portCount) throw new CliError(410, `Port number must be 1..${this.portCount}`);
    return p;
  }

  private port(p: number): SimPort {
    const port = this.ports[p - 1];
    if (!port) throw new Error(`hub ${this.serial} has no port ${p}`);
    return port;
  }

  /** Attachment as the hub sees it; an attached device vanishing from a powered port sets `T`. */
  private attached(port: SimPort): boolean {
    const attached = port.load?.attached() ?? false;
    if (port.wasAttached && !attached && port.mode !== 'o') port.theft = true;
    if (attached) port.theft = false;
    port.wasAttached = attached;
    return attached;
  }

  private modeFlag(port: SimPort): string {
    switch (port.mode) {
      case 'o': return 'O';
      case 's': return 'S';
      case 'b': return 'B';
      default:
        if (!port.load?.attached()) return 'I';
        return port.load.batteryLevel() >= 100 ? 'F' : 'C';
    }
  }

  /** Attached and charging draws up to 2 A, tapering above 80 %; sync draws USB 2.0 power; full is a trickle. */
  private milliamps(port: SimPort): number {
    if (port.mode === 'o' || !port.load?.attached()) return 0;
    const level = port.load.batteryLevel();
    if (level >= 100) return 35;
    if (port.mode === 'c') return level <= 80 ? 1950 : Math.round(1950 - ((level - 80) / 20) * 1700);
    return 430;
  }

  private fiveVolt(): number {
    const load = this.ports.reduce((sum, port) => sum + this.milliamps(port), 0);
    return Math.round((5.15 - load / 100_000) * 100) / 100;
  }
}
