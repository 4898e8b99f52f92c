/** Sending a command to the gateway holding a device, with failures turned into business failures. */
import { ApiFailure } from '@devicelab/shared';
import type { CommandAction, CommandResult } from '@devicelab/proto';
import { GatewayUnavailableError, type GatewayDirectory } from '../gateways/gateway-directory';

export const COMMAND_TIMEOUTS_MS = {
  install: 10 * 60_000,
  uninstall: 2 * 60_000,
  launch: 2 * 60_000,
  reboot: 60_000,
  readLog: 30_000,
  readPackages: 60_000,
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
      throw new ApiFailure(`Device '${device.name}' is not reachable: ${err.message}`);
    }
    throw err;
  }
  if (!result.ok) throw commandFailure(action, `device '${device.name}'`, result);
  return result;
}

const WHAT: Record<CommandAction['action'], string> = {
  install: 'Installing the application', uninstall: 'Uninstalling the application', launch: 'Launching the application',
  reboot: 'Rebooting', readLog: 'Reading the device log', readPackages: 'Reading the installed applications',
  setUsbPortState: 'Switching the USB port', rebootUsbHub: 'Rebooting the USB hub',
};

/**
 * The failure a client sees for a command the gateway reports failed: what was done, where, the gateway's text,
 * and the failure code (the device's `INSTALL_FAILED_...`, or the gateway's own) so clients can key on it.
 */
export function commandFailure(action: CommandAction, target: string, result: CommandResult): CommandFailure {
  const code = result.errorCode && !result.errorMessage.includes(result.errorCode) ? ` (${result.errorCode})` : '';
  const reason = `${result.errorMessage || 'no reason given'}${code}`;
  return new CommandFailure(`${WHAT[action.action]} on ${target} failed: ${reason}`, reason);
}

/** A command the gateway reports failed; `reason` is the gateway's text with its code, without the context. */
export class CommandFailure extends ApiFailure {
  constructor(message: string, readonly reason: string) {
    super(message);
  }
}
