/**
 * Executes a hub Command against the driver of the device's platform and turns the outcome into a CommandResult. Install pulls
 * the binary into the app cache first (FetchBlob). The command's deadline bounds how long the hub waits: an
 * expired command is not started, and a result after the deadline is replaced by a timeout error. A failure keeps
 * its catalog code (the device's `INSTALL_FAILED_...`, or the gateway's own) on its way to the hub.
 */
import type { Command, CommandResult, DeviceState } from '@devicelab/proto';
import type { FailureCode, Logger } from '@devicelab/shared';
import type { AppCache } from '../apps/app-cache';
import { DeviceCommandError, type ArrivingApp } from '../drivers/device-driver';
import type { DriverRegistry } from '../drivers/registry';
import { UsbHubError } from '../usbhubs/usb-hub-controller';
import type { UsbHubService } from '../usbhubs/usb-hub-service';

type BlobFetcher = (sha256: string, announce?: (totalSize: number) => void) => AsyncIterable<Buffer>;

/** The devices' automation server logs (ReadAutomationLog). */
export interface AutomationLogs {
  log(id: string, filter: { sessionId?: string; requestId?: string }): string;
}

export class CommandExecutor {
  constructor(
    private readonly drivers: DriverRegistry,
    private readonly appCache: AppCache,
    private readonly fetchBlob: BlobFetcher,
    private readonly logger: Logger,
    /** Reports a device's state that no result carries: a change that finished after its command timed out. */
    private readonly reportState: (state: DeviceState) => void,
    private readonly usbHubs?: UsbHubService,
    private readonly automation?: AutomationLogs,
  ) {}

  /** `onProgress` hears how far an install is (percent, each value once and rising) while it runs. */
  async execute(command: Command, onProgress?: (percent: number) => void): Promise<CommandResult> {
    const failed = (errorMessage: string, errorCode: FailureCode | ''): CommandResult =>
      ({ commandId: command.commandId, ok: false, errorMessage, errorCode, text: '' });
    const deadline = command.deadlineMs > 0 ? command.deadlineMs : undefined;
    if (deadline !== undefined && Date.now() >= deadline) {
      return failed('The command expired before the gateway could start it', 'COMMAND_EXPIRED');
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<CommandResult>((resolve) => {
      if (deadline === undefined) return;
      timer = setTimeout(() => resolve(failed('The device did not finish the command in time', 'COMMAND_TIMEOUT')), deadline - Date.now());
    });
    const work = this.run(command, onProgress && risingOnly(onProgress)).then(
      (outcome): CommandResult => ({ commandId: command.commandId, ok: true, errorMessage: '', errorCode: '', text: '', ...outcome }),
      (err: unknown) => {
        if (err instanceof DeviceCommandError) return failed(err.message, err.code);
        // A USB hub's own reason (`timeout`, `closed`) stays in the text, where the hub's answer has always had it.
        if (err instanceof UsbHubError) return failed(err.code ? `${err.message} (${err.code})` : err.message, 'USB_HUB_ERROR');
        this.logger.error({ err, command: command.commandId }, 'command failed unexpectedly');
        return failed('The gateway failed unexpectedly while running the command; see its log', 'GATEWAY_ERROR');
      },
    );
    try {
      const result = await Promise.race([work, timeout]);
      if (!result.ok && result.errorCode === 'COMMAND_TIMEOUT') {
        void work.then((late) => { if (late.device) this.reportState(late.device); });
      }
      return result;
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  /** The command's outcome: a text (ReadLog, launch output) or the device's state after the change. */
  private async run(command: Command, onProgress?: (percent: number) => void): Promise<{ text?: string; device?: DeviceState }> {
    const id = command.vendorUniqueIdentifier;
    switch (command.action) {
      case 'install': {
        const { blobSha256, applicationIdentifier, force, forAutomation } = command.install;
        const extension = this.drivers.appFileExtension(id);
        // The install starts as the download does (a cold cache costs no extra wait); a download that fails or does
        // not match its digest fails the install with APP_FETCH_FAILED, whether it had started or not.
        let logged = false;
        const fetchFailed = (err: unknown): never => {
          if (!logged) this.logger.warn({ err, blobSha256 }, 'fetching an application binary from the hub failed');
          logged = true;
          throw new DeviceCommandError(
            `The gateway could not get the application binary from the hub: ${err instanceof Error ? err.message : String(err)}`, 'APP_FETCH_FAILED');
        };
        const arriving = await this.appCache.arriving(blobSha256, extension, (announce) => this.fetchBlob(blobSha256, announce)).catch(fetchFailed);
        const complete = arriving.complete.catch(fetchFailed);
        complete.catch(() => undefined); // a streamed install hears the failure from its reads
        const app: ArrivingApp = {
          size: arriving.size,
          read: (pieceBytes) => failingAs(arriving.read(pieceBytes), fetchFailed),
          complete,
        };
        const device = await this.drivers.installArriving(id, app, {
          force, packageId: applicationIdentifier || undefined, onProgress, forAutomation,
        });
        // What "prepared for native automation" meant on this platform, for the install's Result.
        return { device, text: forAutomation ? this.drivers.automationOf(id)?.installedForAutomation ?? '' : '' };
      }
      case 'uninstall':
        return { device: await this.drivers.uninstall(id, command.uninstall.applicationIdentifier, { keepData: command.uninstall.keepData }) };
      case 'readPackages':
        return { device: await this.drivers.readPackages(id) };
      case 'launch':
        return {
          text: await this.drivers.launch(id, command.launch.applicationIdentifier, {
            arguments: command.launch.arguments, startOnly: command.launch.startOnly,
          }),
        };
      case 'reboot':
        await this.drivers.reboot(id);
        return {};
      case 'readLog':
        return { text: await this.drivers.readLog(id, command.readLog.maxLines) };
      case 'readAutomationLog': {
        this.drivers.ownerOf(id); // an unknown device fails as every device command does
        const { sessionId, requestId } = command.readAutomationLog;
        return { text: this.automation?.log(id, { sessionId: sessionId || undefined, requestId: requestId || undefined }) ?? '' };
      }
      case 'setUsbPortState':
        await this.requireUsbHubs().setPortState(command.setUsbPortState);
        return {};
      case 'rebootUsbHub':
        await this.requireUsbHubs().reboot(command.rebootUsbHub);
        return {};
      default:
        throw new DeviceCommandError(`Unsupported command: ${(command as { action?: string }).action ?? 'none'}`, 'UNSUPPORTED_COMMAND');
    }
  }

  private requireUsbHubs(): UsbHubService {
    if (!this.usbHubs) throw new UsbHubError('This gateway has no USB hubs configured');
    return this.usbHubs;
  }
}

/** Passes on a percent only when it rose: a driver may repeat one (a chunk smaller than 1 %) or start over. */
function risingOnly(onProgress: (percent: number) => void): (percent: number) => void {
  let last = -1;
  return (percent) => {
    if (!(percent > last)) return;
    last = percent;
    onProgress(percent);
  };
}

/** The pieces of `source`; its failure rethrown as `failed` makes it. */
async function* failingAs(source: AsyncIterable<Buffer>, failed: (err: unknown) => never): AsyncIterable<Buffer> {
  try {
    yield* source;
  } catch (err) {
    failed(err);
  }
}
