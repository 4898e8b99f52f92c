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
  setUsbPortState: 15_000,
  rebootUsbHub: 15_000,
} as const;

/** Runs the command; rejects with ApiFailure when no gateway holds the device or the gateway reports failure. */
export async function runDeviceCommand(
  gateways: GatewayDirectory,
  device: { vendor_unique_identifier: string; name: string },
  action: CommandAction,
): Promise<CommandResult> {
  let result: CommandResult;
  try {
    result = await gateways.sendCommand(device.vendor_unique_identifier, action, COMMAND_TIMEOUTS_MS[action.action]);
  } catch (err) {
    if (err instanceof GatewayUnavailableError) {
      throw new ApiFailure(`Device '${device.name}' is not reachable: ${err.message}`);
    }
    throw err;
  }
  if (!result.ok) throw new ApiFailure(result.errorMessage || `The ${action.action} command failed.`);
  return result;
}
