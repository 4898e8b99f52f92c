/**
 * Automation: each gateway's automation installation as it reported it (AutomationReport), HTTP to a device's
 * Appium server through automation tunnels (one keep-alive agent per device), and the device's Appium log read by
 * a ReadAutomationLog command. The hub never sends a client's path to the log: the log is a command, not a URL.
 */
import type http from 'node:http';
import type { AutomationReport } from '@devicelab/proto';
import { COMMAND_TIMEOUTS_MS, commandFailure } from '../../domain/gateway-commands';
import type { AutomationInformation, DeviceTunnel } from '../gateway-directory';
import type { GatewaySession } from '../gateway-session';
import type { ChannelContext, HubChannel } from '../link/channel';
import { AutomationAgent } from './automation-agent';
import type { CommandsChannel } from './commands';

/** How long a tunnel may take to open: the gateway starts the device's server first when it is not running. */
export const AUTOMATION_TUNNEL_TIMEOUT_MS = 60_000;

export function automationChannel(
  { sessions }: ChannelContext, commands: CommandsChannel, openTunnel: (vendorUniqueIdentifier: string) => Promise<DeviceTunnel>,
): HubChannel {
  const reports = new WeakMap<GatewaySession, AutomationReport>();
  const agents = new Map<string, AutomationAgent>();
  return {
    open: (session) => ({
      messages: {
        automationReport: (report) => {
          reports.set(session, report);
        },
      },
    }),
    directory: {
      automationAgent(vendorUniqueIdentifier): http.Agent {
        let agent = agents.get(vendorUniqueIdentifier);
        if (!agent) {
          agent = new AutomationAgent(() => openTunnel(vendorUniqueIdentifier));
          agents.set(vendorUniqueIdentifier, agent);
        }
        return agent;
      },
      async automationLog(vendorUniqueIdentifier, filter): Promise<string> {
        const action = {
          action: 'readAutomationLog' as const,
          readAutomationLog: { sessionId: filter.sessionId ?? '', requestId: filter.requestId ?? '' },
        };
        const result = await commands.directory!.sendCommand!(vendorUniqueIdentifier, action, COMMAND_TIMEOUTS_MS.readAutomationLog);
        if (!result.ok) throw commandFailure(action, `device ${vendorUniqueIdentifier}`, result);
        return result.text;
      },
      automationInfo(): AutomationInformation[] {
        return sessions.all().flatMap((session) => {
          const report = reports.get(session);
          if (!report) return [];
          const { path, version, pathHash, configurationError } = report;
          const drivers = (report.drivers ?? []).map(({ name, version: driverVersion }) => ({ name, version: driverVersion }));
          return [{ gatewayName: session.gatewayName, path, version, pathHash, drivers, configurationError }];
        });
      },
    },
  };
}
