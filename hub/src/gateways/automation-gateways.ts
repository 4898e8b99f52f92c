/**
 * The gateway directory's automation side (an agent per device to its Appium server, the device's Appium log) as
 * the automation domain takes it; a directory without it answers that no gateway serves automation.
 */
import type { AutomationGateways } from '../domain/automation/appium-client';
import { GatewayUnavailableError, type GatewayDirectory } from './gateway-directory';

export function automationGateways(directory: GatewayDirectory): AutomationGateways {
  const automation = directory as GatewayDirectory & Partial<AutomationGateways>;
  const unavailable = () => new GatewayUnavailableError('No gateway of this lab serves automation (Appium) yet.');
  return {
    automationAgent(vendorUniqueIdentifier) {
      if (!automation.automationAgent) throw unavailable();
      return automation.automationAgent(vendorUniqueIdentifier);
    },
    async automationLog(vendorUniqueIdentifier, filter) {
      if (!automation.automationLog) return '';
      return automation.automationLog(vendorUniqueIdentifier, filter);
    },
  };
}
