/**
 * Automation: what the gateway's automation servers are (AutomationReport after Welcome), the tunnels the hub opens
 * to a device's Appium server (OpenTunnel with service `automation`, dispatched here by the access channel), and
 * the device's Appium log for ReadAutomationLog commands. A tunnel is joined to the server at 127.0.0.1:<its port>,
 * started first when it is not running yet; a device with no server here is refused with the reason.
 */
import net from 'node:net';
import type { AutomationReport, MessageHandlers, OpenTunnel } from '@devicelab/proto';
import { frameStreamEnd, pumpBytes, socketEnd, type Logger } from '@devicelab/shared';
import { refuseTunnel, type TunnelCall } from '../../access/hub-tunnel';
import type { AppiumLogFilter } from '../../automation/appium-log';
import type { AutomationServers } from '../../automation/automation-servers';
import type { ChannelHubMessage, GatewayChannel, HubConnection, LinkSession } from './channel';

/** A tunnel waits this long for the device's server to start; the hub gives up on it a little later. */
const SERVER_START_WAIT_MS = 50_000;

const AUTOMATION_OFF: AutomationReport = {
  path: '', version: '', pathHash: '', drivers: [], configurationError: 'Automation is turned off on this gateway (DEVICELAB_AUTOMATION=off)',
};

export class AutomationChannel implements GatewayChannel {
  constructor(private readonly link: HubConnection, private readonly servers: AutomationServers | undefined, private readonly logger: Logger) {}

  open(session: LinkSession): MessageHandlers<ChannelHubMessage> {
    const report = this.servers ? this.servers.automationReport() : Promise.resolve(AUTOMATION_OFF);
    void report.then((automationReport) => session.send({ body: 'automationReport', automationReport }),
      (err: unknown) => this.logger.warn({ err }, 'could not read the automation installation'));
    return {};
  }

  /** OpenTunnel with service `automation`: a byte stream into the device's Appium server. */
  tunnel(request: OpenTunnel, openCall: () => TunnelCall): void {
    const call = openCall();
    call.on('error', () => undefined); // the hub ended it; the far end is closed by the pump
    const refuse = (reason: string) => refuseTunnel(call, request.tunnelId, reason);
    if (!this.servers) return refuse('automation is turned off on this gateway');
    let timer: NodeJS.Timeout | undefined;
    const startWait = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`its server did not start within ${SERVER_START_WAIT_MS / 1000} s`)), SERVER_START_WAIT_MS);
    });
    Promise.race([this.servers.serverFor(request.vendorUniqueIdentifier), startWait]).finally(() => clearTimeout(timer)).then((port) => {
      call.write({ tunnelId: request.tunnelId });
      const socket = net.connect({ host: '127.0.0.1', port, allowHalfOpen: true });
      socket.setNoDelay(true);
      socket.on('error', (err) => {
        this.logger.debug({ err, tunnel: request.tunnelId }, 'automation tunnel socket failed');
        socket.destroy();
        call.cancel();
      });
      pumpBytes(socketEnd(socket), frameStreamEnd(call, () => call.cancel()));
    }, (err: unknown) => refuse(`device ${request.vendorUniqueIdentifier} has no automation server here: ${err instanceof Error ? err.message : String(err)}`));
  }

  /** The device's kept Appium log lines (JSON lines): all, or those of a session / request. */
  log(id: string, filter: AppiumLogFilter): string {
    return this.servers?.log(id, filter) ?? '';
  }
}
