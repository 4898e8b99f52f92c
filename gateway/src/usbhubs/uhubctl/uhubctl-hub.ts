/**
 * A plain hub with per-port power switching, driven by `uhubctl` (testbench.md 2.3). Off and Data map to
 * power off and on; there is no Charge mode, no metering and no reboot, and each says so clearly. The hub's
 * USB location (`1-1.4`) stands in for its serial number.
 */
import { execFile } from 'node:child_process';
import type { Logger } from '@devicelab/shared';
import { UsbHubError, type UsbHubController, type UsbHubStatus, type UsbPortMode } from '../usb-hub-controller';
import { parseUhubctlStatus } from './uhubctl-status';

interface UhubctlHubOptions {
  /** The hub's USB location as uhubctl names it (`-l 1-1.4`). */
  location: string;
  logger: Logger;
  /** uhubctl binary; default `uhubctl` from PATH. */
  bin?: string;
  pollIntervalMs?: number;
}

export class UhubctlHub implements UsbHubController {
  readonly kind = 'uhubctl';
  private current: UsbHubStatus;
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners: Array<(status: UsbHubStatus) => void> = [];

  constructor(private readonly options: UhubctlHubOptions) {
    this.current = {
      serialNumber: options.location, location: options.location, name: `uhubctl ${options.location}`, description: '',
      model: '', firmware: '', firmwareDate: '', uptimeSeconds: 0, fiveVoltNow: 0, fiveVoltMin: 0, fiveVoltMax: 0,
      errorMessage: 'Not read yet', isErrored: true, ports: [],
    };
  }

  async start(): Promise<void> {
    await this.refresh().catch(() => undefined);
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), this.options.pollIntervalMs ?? 5_000);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
  }

  onStatus(listener: (status: UsbHubStatus) => void): void {
    this.listeners.push(listener);
  }

  status(): UsbHubStatus {
    return this.current;
  }

  async refresh(): Promise<UsbHubStatus> {
    try {
      this.apply(await this.run(['-l', this.options.location]));
    } catch (err) {
      this.current = { ...this.current, isErrored: true, errorMessage: (err as Error).message };
      this.notify();
      throw err;
    }
    return this.current;
  }

  async setPortMode(port: number | undefined, mode: UsbPortMode): Promise<void> {
    if (mode === 'Charge') {
      throw new UsbHubError(`Hub ${this.options.location} is switched by uhubctl and has no Charge mode: use Off or Data`);
    }
    const count = this.current.ports.length;
    if (port !== undefined && (port < 1 || (count > 0 && port > count))) {
      throw new UsbHubError(`Hub ${this.options.location} has no port ${port} (ports 1..${count})`);
    }
    const ports = port === undefined ? [] : ['-p', String(port)];
    await this.run(['-l', this.options.location, ...ports, '-a', mode === 'Off' ? 'off' : 'on']);
    // The answer lists only the switched ports: read the whole hub again.
    await this.refresh();
  }

  async reboot(): Promise<void> {
    throw new UsbHubError(`Hub ${this.options.location} is switched by uhubctl and cannot be rebooted`);
  }

  private apply(output: string): void {
    // uhubctl prints the status before and after a change: the last block for our hub is the current one.
    const hub = parseUhubctlStatus(output).filter((h) => h.location === this.options.location).pop();
    if (!hub) throw new UsbHubError(`uhubctl did not report hub ${this.options.location}`);
    this.current = {
      ...this.current, description: hub.description, errorMessage: '', isErrored: false,
      ports: hub.ports.map((p) => ({
        port: p.port, state: p.powered ? 'Data' : 'Off', milliamps: 0, chargingSeconds: 0, chargingProfile: '',
        attached: p.connected, flags: [p.powered ? 'Sync' : 'Off', p.connected ? 'Attached' : 'Detached'],
      })),
    };
    this.notify();
  }

  private notify(): void {
    for (const listener of this.listeners) listener(this.current);
  }

  private run(args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(this.options.bin ?? 'uhubctl', args, { timeout: 15_000 }, (err, stdout, stderr) => {
        if (!err) return resolve(stdout);
        const text = `${stdout}${stderr}`.trim().split('\n').pop() || err.message;
        reject(new UsbHubError(`uhubctl ${args.join(' ')} failed: ${text}`));
      });
    });
  }
}
