/**
 * A simulated Cambrionix hub on a pseudo-terminal: the hub model, its CLI terminal and its USB serial link.
 * `reboot` (the CLI command or `reboot()`) drops the link, comes back after `rebootMs` with every port in its
 * default mode and the `R` flag set, as the real hub does.
 */
import { CliTerminal } from './cli-terminal';
import { CambrionixHubModel, type HubModelOptions } from './hub-model';
import { SerialLink } from './serial-link';

export interface SimCambrionixHubOptions extends HubModelOptions {
  /** Where the tty appears (a symlink made by socat). */
  path: string;
  /** How long the hub is away during a reboot. Default 1500 ms. */
  rebootMs?: number;
}

export class SimCambrionixHub {
  readonly model: CambrionixHubModel;
  private readonly link: SerialLink;
  private rebootTimer: NodeJS.Timeout | undefined;
  private readonly rebootMs: number;
  /** Commands received, newest last (for tests that check what the gateway sent). */
  readonly commandLog: string[] = [];
  /** A hung hub: it takes input but answers nothing (firmware stall) until set false. */
  hung = false;

  constructor(options: SimCambrionixHubOptions) {
    this.model = new CambrionixHubModel(options);
    this.rebootMs = options.rebootMs ?? 1_500;
    this.link = new SerialLink(options.path, {
      connected: (write) => {
        const terminal = new CliTerminal(this.model, (text) => {
          if (!this.hung) write(text);
        }, () => this.reboot());
        return (chunk) => {
          const text = chunk.toString('latin1').replace(/[\r\n\x03]+/g, '\n').trim();
          if (text) this.commandLog.push(...text.split('\n'));
          terminal.input(chunk);
        };
      },
    });
  }

  get path(): string {
    return this.link.path;
  }

  get serial(): string {
    return this.model.serial;
  }

  get plugged(): boolean {
    return this.link.plugged;
  }

  async start(): Promise<void> {
    await this.link.start();
  }

  /** The hub's USB cable comes out / goes back in. */
  unplug(): Promise<void> {
    return this.link.unplug();
  }

  plug(): Promise<void> {
    return this.link.plug();
  }

  /** As `reboot` on the CLI: the link drops now and the hub is back after `rebootMs`, modes reset, `R` set. */
  reboot(): void {
    void this.link.unplug();
    clearTimeout(this.rebootTimer);
    this.rebootTimer = setTimeout(() => {
      this.model.powerUp();
      void this.link.plug().catch(() => undefined);
    }, this.rebootMs);
  }

  async stop(): Promise<void> {
    clearTimeout(this.rebootTimer);
    await this.link.stop();
  }
}
