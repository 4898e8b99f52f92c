/**
 * A Cambrionix hub driven over its serial CLI. Keeps the port open; a periodic poll (`health`, `state`) keeps
 * the status fresh and notices an unplugged hub (write errors / EIO, timeouts), after which it reopens the
 * path until the hub is back. A reboot closes the port on the hub's side; the same reopen loop picks it up,
 * and the `R` (rebooted) flag tells it the hub forgot its port modes: the modes this gateway set are
 * restored, then the flag is cleared with `crf`.
 */
import { EventEmitter } from 'node:events';
import type { Logger } from '@devicelab/shared';
import { UsbHubError, type UsbHubController, type UsbHubStatus, type UsbPortMode } from '../usb-hub-controller';
import { modeLetter, parseHealth, parseId, parseState, parseSystem } from './cli-parsers';
import { CliSession } from './cli-session';

interface CambrionixHubOptions {
  /** Serial device path (`/dev/serial/by-id/usb-cambrionix_...`, `/dev/ttyUSB0`, a pty in tests). */
  path: string;
  logger: Logger;
  /** Status poll; also how soon an unplug is noticed. Default 2 s. */
  pollIntervalMs?: number;
  commandTimeoutMs?: number;
  /** Pause between attempts to reopen a lost hub. Default 1 s. */
  reopenDelayMs?: number;
  baudRate?: number;
}

/** Events: `status` (UsbHubStatus) after every poll or change, `connected`, `disconnected` (reason). */
export class CambrionixHub extends EventEmitter implements UsbHubController {
  readonly kind = 'cambrionix';
  private session: CliSession | undefined;
  private current: UsbHubStatus;
  private stopped = true;
  private pollTimer: NodeJS.Timeout | undefined;
  private reopenTimer: NodeJS.Timeout | undefined;
  private connecting: Promise<void> | undefined;
  /** Modes this gateway set, restored after the hub lost them in a reboot. `0` = every port. */
  private readonly wantedModes = new Map<number, UsbPortMode>();

  constructor(private readonly options: CambrionixHubOptions) {
    super();
    this.current = {
      serialNumber: '', location: options.path, name: '', description: '', model: '', firmware: '', firmwareDate: '',
      uptimeSeconds: 0, fiveVoltNow: 0, fiveVoltMin: 0, fiveVoltMax: 0,
      errorMessage: 'Not connected yet', isErrored: true, ports: [],
    };
  }

  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    try {
      await this.connect();
    } catch (err) {
      this.lost(err instanceof Error ? err.message : String(err));
    }
    this.pollTimer = setInterval(() => void this.poll(), this.options.pollIntervalMs ?? 2_000);
  }

  onStatus(listener: (status: UsbHubStatus) => void): void {
    this.on('status', listener);
  }

  status(): UsbHubStatus {
    return this.current;
  }

  async refresh(): Promise<UsbHubStatus> {
    const session = this.requireSession();
    const [health, state] = [parseHealth(await session.command('health')), parseState(await session.command('state'))];
    const errors = health.errorFlags.length > 0 ? `Hub error flags: ${health.errorFlags.join(' ')}` : '';
    this.current = {
      ...this.current,
      fiveVoltNow: health.fiveVoltNow ?? this.current.fiveVoltNow,
      fiveVoltMin: health.fiveVoltMin ?? this.current.fiveVoltMin,
      fiveVoltMax: health.fiveVoltMax ?? this.current.fiveVoltMax,
      uptimeSeconds: health.uptimeSeconds ?? this.current.uptimeSeconds,
      errorMessage: errors,
      isErrored: errors !== '',
      ports: state,
    };
    if (health.rebooted || state.some((port) => port.flags.includes('Rebooted'))) await this.restoreAfterReboot(session);
    this.emit('status', this.current);
    return this.current;
  }

  async setPortMode(port: number | undefined, mode: UsbPortMode): Promise<void> {
    const session = this.requireSession();
    const count = this.current.ports.length;
    if (port !== undefined && (!Number.isInteger(port) || port < 1 || (count > 0 && port > count))) {
      throw new UsbHubError(`Hub ${this.current.serialNumber} has no port ${port} (ports 1..${count})`);
    }
    await session.command(port === undefined ? `mode ${modeLetter(mode)}` : `mode ${modeLetter(mode)} ${port}`);
    if (port === undefined) this.wantedModes.clear();
    this.wantedModes.set(port ?? 0, mode);
    await this.refresh().catch(() => undefined);
  }

  async reboot(): Promise<void> {
    const session = this.requireSession();
    await session.sendWithoutAnswer('reboot');
    // The hub drops its USB link; the poll notices the closed port and the reopen loop finds the hub again.
    this.lost('rebooting');
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.pollTimer);
    clearTimeout(this.reopenTimer);
    await this.connecting?.catch(() => undefined);
    const session = this.session;
    this.session = undefined;
    await session?.close();
  }

  private requireSession(): CliSession {
    if (!this.session?.isOpen) {
      throw new UsbHubError(`Hub ${this.current.serialNumber || this.options.path} is not connected (${this.current.errorMessage})`);
    }
    return this.session;
  }

  private connect(): Promise<void> {
    this.connecting ??= this.open().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async open(): Promise<void> {
    const session = await CliSession.open({
      path: this.options.path, baudRate: this.options.baudRate, commandTimeoutMs: this.options.commandTimeoutMs,
    });
    try {
      const id = parseId(await session.command('id'));
      const system = parseSystem(await session.command('system'));
      if (this.stopped) throw new UsbHubError('stopped');
      this.current = {
        ...this.current,
        serialNumber: id.serialNumber || this.current.serialNumber,
        name: `${id.manufacturer || 'cambrionix'} ${id.model || system.model}`.trim(),
        description: system.description,
        model: id.model || system.model,
        firmware: id.firmware || system.firmware,
        firmwareDate: system.compiled,
      };
    } catch (err) {
      await session.close();
      throw err;
    }
    this.session = session;
    session.once('close', (reason: string) => {
      if (this.session === session) this.lost(reason);
    });
    this.options.logger.info({ hub: this.current.serialNumber, path: this.options.path }, 'Cambrionix hub connected');
    await this.refresh();
    this.emit('connected');
  }

  private async poll(): Promise<void> {
    if (this.stopped || this.connecting) return;
    if (!this.session?.isOpen) return;
    try {
      await this.refresh();
    } catch (err) {
      // A timeout alone may be a busy hub; a closed port (write error, EIO) means it is gone.
      const message = err instanceof Error ? err.message : String(err);
      if (!this.session?.isOpen || (err instanceof UsbHubError && err.code === 'closed')) this.lost(message);
      else this.options.logger.warn({ hub: this.current.serialNumber, err }, 'hub poll failed');
    }
  }

  /** The hub is gone (unplugged, rebooting, not answering): report it and keep trying to reopen. */
  private lost(reason: string): void {
    const session = this.session;
    this.session = undefined;
    void session?.close();
    if (!this.current.isErrored || this.current.errorMessage !== `Disconnected: ${reason}`) {
      this.current = {
        ...this.current, errorMessage: `Disconnected: ${reason}`, isErrored: true,
        ports: this.current.ports.map((port) => ({ ...port, state: 'Unknown', milliamps: 0 })),
      };
      const log = reason === 'rebooting' ? this.options.logger.info.bind(this.options.logger) : this.options.logger.warn.bind(this.options.logger);
      log({ hub: this.current.serialNumber, path: this.options.path, reason }, 'Cambrionix hub lost');
      this.emit('disconnected', reason);
      this.emit('status', this.current);
    }
    this.scheduleReopen();
  }

  private scheduleReopen(): void {
    if (this.stopped || this.reopenTimer) return;
    this.reopenTimer = setTimeout(() => {
      this.reopenTimer = undefined;
      if (this.stopped || this.session?.isOpen) return;
      this.connect().catch((err: unknown) => {
        this.options.logger.debug({ path: this.options.path, err }, 'hub still away');
        this.scheduleReopen();
      });
    }, this.options.reopenDelayMs ?? 1_000);
  }

  /** After a reboot the hub runs its default modes: put back the ones this gateway set, then clear `R`. */
  private async restoreAfterReboot(session: CliSession): Promise<void> {
    const all = this.wantedModes.get(0);
    if (all) await session.command(`mode ${modeLetter(all)}`);
    for (const [port, mode] of this.wantedModes) if (port !== 0) await session.command(`mode ${modeLetter(mode)} ${port}`);
    await session.command('crf');
    this.options.logger.info({ hub: this.current.serialNumber }, 'hub had rebooted: port modes restored');
    this.current = { ...this.current, ports: parseState(await session.command('state')) };
  }
}
