/**
 * Executes a hub Command against the device driver and turns the outcome into a CommandResult. Install pulls
 * the binary into the app cache first (FetchBlob). The command's deadline bounds how long the hub waits: an
 * expired command is not started, and a result after the deadline is replaced by a timeout error.
 */
import type { Command, CommandResult } from '@devicelab/proto';
import type { Logger } from '@devicelab/shared';
import type { AppCache } from '../apps/app-cache';
import { DeviceCommandError, type DeviceDriver } from '../drivers/device-driver';
import { UsbHubError } from '../usbhubs/usb-hub-controller';
import type { UsbHubService } from '../usbhubs/usb-hub-service';

export type BlobFetcher = (sha256: string) => AsyncIterable<Buffer>;

export class CommandExecutor {
  constructor(
    private readonly driver: DeviceDriver,
    private readonly appCache: AppCache,
    private readonly fetchBlob: BlobFetcher,
    private readonly logger: Logger,
    private readonly usbHubs?: UsbHubService,
  ) {}

  async execute(command: Command): Promise<CommandResult> {
    const result = (ok: boolean, errorMessage = '', text = ''): CommandResult =>
      ({ commandId: command.commandId, ok, errorMessage, text });
    const deadline = command.deadlineMs > 0 ? command.deadlineMs : undefined;
    if (deadline !== undefined && Date.now() >= deadline) {
      return result(false, 'The command expired before the gateway could start it');
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<CommandResult>((resolve) => {
      if (deadline === undefined) return;
      timer = setTimeout(() => resolve(result(false, 'The device did not finish the command in time')), deadline - Date.now());
    });
    const work = this.run(command).then(
      (text) => result(true, '', text),
      (err: unknown) => {
        if (!(err instanceof DeviceCommandError) && !(err instanceof UsbHubError)) this.logger.error({ err: String(err), command: command.commandId }, 'command failed');
        return result(false, err instanceof Error ? err.message : String(err));
      },
    );
    try {
      return await Promise.race([work, timeout]);
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  private async run(command: Command): Promise<string> {
    const id = command.vendorUniqueIdentifier;
    switch (command.action) {
      case 'install': {
        const { blobSha256, applicationIdentifier, force } = command.install;
        const file = await this.appCache.ensure(blobSha256, () => this.fetchBlob(blobSha256));
        await this.driver.install(id, file, { force, packageId: applicationIdentifier || undefined });
        return '';
      }
      case 'uninstall':
        await this.driver.uninstall(id, command.uninstall.applicationIdentifier, { keepData: command.uninstall.keepData });
        return '';
      case 'launch':
        return this.driver.launch(id, command.launch.applicationIdentifier, {
          arguments: command.launch.arguments, startOnly: command.launch.startOnly,
        });
      case 'reboot':
        await this.driver.reboot(id);
        return '';
      case 'readLog':
        return this.driver.readLog(id, command.readLog.maxLines);
      case 'setUsbPortState':
        await this.requireUsbHubs().setPortState(command.setUsbPortState);
        return '';
      case 'rebootUsbHub':
        await this.requireUsbHubs().reboot(command.rebootUsbHub);
        return '';
      default:
        throw new DeviceCommandError(`Unsupported command: ${(command as { action?: string }).action ?? 'none'}`);
    }
  }

  private requireUsbHubs(): UsbHubService {
    if (!this.usbHubs) throw new UsbHubError('This gateway has no USB hubs configured');
    return this.usbHubs;
  }
}
