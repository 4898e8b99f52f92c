import type { DeviceState } from '@devicelab/proto';
import {
  DeviceCommandError, type DeviceDriver, type DeviceListener, type InstallOptions, type LaunchOptions,
  type UninstallOptions,
} from '../../src/drivers/device-driver';

/** In-memory DeviceDriver recording the calls it receives. */
export class FakeDriver implements DeviceDriver {
  readonly operatingSystem = 'Android';
  readonly devices = new Map<string, DeviceState>();
  readonly calls: { op: string; args: unknown[] }[] = [];
  listener: DeviceListener | undefined;
  delayMs = 0;

  async start(listener: DeviceListener): Promise<void> { this.listener = listener; }
  async stop(): Promise<void> { this.listener = undefined; }
  snapshot(): DeviceState[] { return [...this.devices.values()]; }

  put(state: DeviceState): void {
    this.devices.set(state.vendorUniqueIdentifier, state);
    this.listener?.deviceChanged(state);
  }

  remove(id: string): void {
    this.devices.delete(id);
    this.listener?.deviceRemoved(id);
  }

  async describe(id: string): Promise<DeviceState> { return this.known(id); }
  async install(id: string, appPath: string, options?: InstallOptions): Promise<void> { await this.record('install', id, appPath, options); }
  async uninstall(id: string, packageId: string, options?: UninstallOptions): Promise<void> { await this.record('uninstall', id, packageId, options); }
  async launch(id: string, packageId: string, options?: LaunchOptions): Promise<string> {
    await this.record('launch', id, packageId, options);
    if (packageId === 'com.missing') throw new DeviceCommandError('No launchable activity found for com.missing');
    return 'Status: ok';
  }
  async reboot(id: string): Promise<void> { await this.record('reboot', id); }
  async readLog(id: string, maxLines: number): Promise<string> {
    await this.record('readLog', id, maxLines);
    return `log of ${id} (${maxLines})`;
  }

  private known(id: string): DeviceState {
    const d = this.devices.get(id);
    if (!d) throw new DeviceCommandError(`Device ${id} is not connected to this gateway`);
    return d;
  }

  private async record(op: string, id: string, ...args: unknown[]): Promise<void> {
    this.known(id);
    this.calls.push({ op, args: [id, ...args] });
    if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
  }
}
