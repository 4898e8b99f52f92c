/** Sending a command to the gateway holding a device, with failures turned into business failures. */
import { ApiFailure, isFailureCode, type FailureCode } from '@devicelab/shared';
import type { CommandAction, CommandResult } from '@devicelab/proto';
import { GatewayUnavailableError, type GatewayDirectory } from '../gateways/gateway-directory';

export const COMMAND_TIMEOUTS_MS = {
  install: 10 * 60_000,
  uninstall: 2 * 60_000,
  launch: 2 * 60_000,
  reboot: 60_000,
  readLog: 30_000,
  readPackages: 60_000,
  readAutomationLog: 30_000,
  setUsbPortState: 15_000,
  rebootUsbHub: 15_000,
} as const;

/** Runs the command (`onProgress` hears an install's percent); rejects with ApiFailure when no gateway holds the device or the gateway reports failure. */
export async function runDeviceCommand(
  gateways: GatewayDirectory,
  device: { vendor_unique_identifier: string; name: string },
  action: CommandAction,
  onProgress?: (percent: number) => void,
): Promise<CommandResult> {
  let result: CommandResult;
  try {
    result = await gateways.sendCommand(device.vendor_unique_identifier, action, COMMAND_TIMEOUTS_MS[action.action], onProgress);
  } catch (err) {
    if (err instanceof GatewayUnavailableError) {
      throw new ApiFailure(`Device '${device.name}' is not reachable: ${err.message}`, 'GATEWAY_OFFLINE');
    }
    throw err;
  }
  if (!result.ok) throw commandFailure(action, `device '${device.name}'`, result);
  return result;
}

const WHAT: Record<CommandAction['action'], string> = {
  install: 'Installing the application', uninstall: 'Uninstalling the application', launch: 'Launching the application',
  reboot: 'Rebooting', readLog: 'Reading the device log', readPackages: 'Reading the installed applications',
  readAutomationLog: 'Reading the automation server log',
  setUsbPortState: 'Switching the USB port', rebootUsbHub: 'Rebooting the USB hub',
};

/**
 * The failure a client sees for a command the gateway reports failed: what was done, where, the gateway's text
 * with its code, and the code itself (the device's `INSTALL_FAILED_...`, or the gateway's own) for programs. A code
 * outside the catalog (a gateway newer or older than this hub) stays in the text only.
 */
export function commandFailure(action: CommandAction, target: string, result: CommandResult): CommandFailure {
  const named = codeAsTextNamesIt(result.errorCode);
  const code = named && !result.errorMessage.includes(named) ? ` (${named})` : '';
  const reason = `${result.errorMessage || 'no reason given'}${code}`;
  return new CommandFailure(`${WHAT[action.action]} on ${target} failed: ${reason}`, reason,
    isFailureCode(result.errorCode) ? result.errorCode : undefined);
}

/** Failures that gained a code with the catalog: their text stays as it was, without it. */
const CODES_NOT_IN_TEXT: ReadonlySet<string> = new Set<FailureCode>(['APP_NOT_LAUNCHABLE', 'INVALID_COMMAND', 'PM_REFUSED', 'USB_HUB_ERROR']);

/** The code as the failure's text names it (installd's errors by their own name), so the text stays what clients read before. */
function codeAsTextNamesIt(code: string): string {
  if (CODES_NOT_IN_TEXT.has(code)) return '';
  return code.startsWith('INSTALLD_') ? code.slice('INSTALLD_'.length) : code;
}

/** A command the gateway reports failed; `reason` is the gateway's text with its code, without the context. */
export class CommandFailure extends ApiFailure {
  constructor(message: string, readonly reason: string, code?: FailureCode) {
    super(message, code);
  }
}
