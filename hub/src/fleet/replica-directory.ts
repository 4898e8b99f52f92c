/**
 * The GatewayDirectory of a replica: devices and USB hubs of gateways linked here go through the local link
 * server; those of gateways linked to another live replica are relayed to it through PostgreSQL
 * (command-relay.ts). Device connections (`openTunnel`) are not relayed here: they fail with
 * DeviceOnOtherReplicaError, and /Device/Connect forwards the WebSocket to that replica (api/device-connect-forward.ts).
 */
import type http from 'node:http';
import type { CommandAction, CommandResult, Retention } from '@devicelab/proto';
import { sql } from 'kysely';
import { COMMAND_TIMEOUTS_MS, commandFailure } from '../domain/gateway-commands';
import {
  GatewayUnavailableError, type AutomationInformation, type ConnectedGateway, type DeviceTunnel, type GatewayDirectory,
} from '../gateways/gateway-directory';
import type { LinkServer } from '../gateways/link-server';
import type { Db } from '../store/database';
import { LockKind, lockHeldSql } from './advisory-locks';
import type { CommandRelay, RelayExecutor } from './command-relay';
import type { RemoteGateways } from './remote-gateways';
import { thisReplica } from './replica';

type LocalLinks = Pick<LinkServer, 'directory' | 'holdsDevice' | 'holdsUsbHub' | 'recorded'>;

/** The owner's side of the relay: runs a relayed command on this replica's links. */
export function localExecutor(link: LocalLinks): RelayExecutor {
  return async (kind, target, request, timeoutMs) => {
    switch (kind) {
      case 'command':
        return link.directory.sendCommand(target, request as CommandAction, timeoutMs);
      case 'usbHubCommand':
        return localUsbHubCommand(link, target, request as CommandAction, timeoutMs);
      case 'accessPort':
        // Confirmed: the requester's retain reaches this replica's gateway through the relay's broadcast, which
        // this answer could overtake; a tunnel the client opens next must find the retain at the gateway.
        return (await link.directory.accessPort(target, (request as { retainId: string }).retainId, timeoutMs, true)) ?? null;
    }
  };
}

/**
 * A port switch or hub reboot on this replica's link, answered once what the gateway reported before its result
 * (the new port states, the devices that left with their port) is recorded: a read after the call shows it.
 */
async function localUsbHubCommand(link: LocalLinks, hubSerialNumber: string, action: CommandAction, timeoutMs: number): Promise<CommandResult> {
  const result = await link.directory.sendUsbHubCommand(hubSerialNumber, action, timeoutMs);
  await link.recorded(hubSerialNumber);
  return result;
}

export class ReplicaDirectory implements GatewayDirectory {
  constructor(
    private readonly db: Db,
    private readonly link: LocalLinks,
    private readonly relay: CommandRelay,
    private readonly remote: RemoteGateways,
  ) {}

  /** A relayed command's progress stays with the owning replica: its job shows the percent only when the link is local. */
  async sendCommand(vendorUniqueIdentifier: string, action: CommandAction, timeoutMs: number,
    onProgress?: (percent: number) => void): Promise<CommandResult> {
    if (this.link.holdsDevice(vendorUniqueIdentifier)) {
      return this.link.directory.sendCommand(vendorUniqueIdentifier, action, timeoutMs, onProgress);
    }
    const owner = await this.deviceOwner(vendorUniqueIdentifier);
    return await this.relay.request(owner.replicaId, 'command', vendorUniqueIdentifier, action, timeoutMs) as CommandResult;
  }

  connectedGateways(): ConnectedGateway[] {
    return [...this.link.directory.connectedGateways(), ...this.remote.list()];
  }

  settled(): Promise<void> {
    return this.remote.settled();
  }

  async sendUsbHubCommand(hubSerialNumber: string, action: CommandAction, timeoutMs: number): Promise<CommandResult> {
    if (this.link.holdsUsbHub(hubSerialNumber)) return localUsbHubCommand(this.link, hubSerialNumber, action, timeoutMs);
    const reporting = () => this.remote.list().find((g) => g.usbHubs.some((hub) => hub.serialNumber === hubSerialNumber));
    if (!reporting()) await this.remote.refresh(); // a gateway that linked a moment ago
    const owner = reporting()?.hubReplica;
    if (!owner) throw new GatewayUnavailableError(`No connected gateway reports USB hub ${hubSerialNumber}.`);
    const result = await this.relay.request(owner, 'usbHubCommand', hubSerialNumber, action, timeoutMs) as CommandResult;
    await this.remote.refresh(); // the owner recorded the new port states: reads through this replica show them
    return result;
  }

  notifyRetention(retention: Retention, othersTold = false): void {
    this.link.directory.notifyRetention(retention);
    if (!othersTold) this.relay.broadcast({ type: 'retention', vendorUniqueIdentifier: retention.vendorUniqueIdentifier });
  }

  get replicaId(): string {
    return this.relay.replicaId;
  }

  async accessPort(vendorUniqueIdentifier: string, retainId: string, timeoutMs: number): Promise<number | undefined> {
    if (this.link.holdsDevice(vendorUniqueIdentifier)) return this.link.directory.accessPort(vendorUniqueIdentifier, retainId, timeoutMs);
    try {
      const owner = await this.deviceOwner(vendorUniqueIdentifier);
      return (await this.relay.request(owner.replicaId, 'accessPort', vendorUniqueIdentifier, { retainId }, timeoutMs) as number | null) ?? undefined;
    } catch (err) {
      if (err instanceof GatewayUnavailableError) return undefined; // as locally: no endpoint known
      throw err;
    }
  }

  async openTunnel(...args: Parameters<GatewayDirectory['openTunnel']>): Promise<DeviceTunnel> {
    const [request] = args;
    if (this.link.holdsDevice(request.vendorUniqueIdentifier)) return this.link.directory.openTunnel(...args);
    const owner = await this.deviceOwner(request.vendorUniqueIdentifier);
    throw new DeviceOnOtherReplicaError(owner.replicaId, owner.apiAddress,
      `Device ${request.vendorUniqueIdentifier} is linked through hub replica ${owner.replicaId}`
      + ` (${owner.hostname ?? 'unknown host'}${owner.apiAddress ? `, ${owner.apiAddress}` : ''}).`);
  }

  /**
   * Tunnels are not relayed through PostgreSQL: the agent reaches devices of gateways linked to this replica only
   * (others fail as a device no gateway holds).
   */
  automationAgent(vendorUniqueIdentifier: string): http.Agent {
    return this.link.directory.automationAgent(vendorUniqueIdentifier);
  }

  /** A command, so it goes through the relay to the replica whose link holds the device. */
  async automationLog(vendorUniqueIdentifier: string, filter: { sessionId?: string; requestId?: string }): Promise<string> {
    if (this.link.holdsDevice(vendorUniqueIdentifier)) return this.link.directory.automationLog(vendorUniqueIdentifier, filter);
    const action: CommandAction = {
      action: 'readAutomationLog', readAutomationLog: { sessionId: filter.sessionId ?? '', requestId: filter.requestId ?? '' },
    };
    const result = await this.sendCommand(vendorUniqueIdentifier, action, COMMAND_TIMEOUTS_MS.readAutomationLog);
    if (!result.ok) throw commandFailure(action, `device ${vendorUniqueIdentifier}`, result);
    return result.text;
  }

  /** The gateways linked to this replica (the others' reports stay with their replicas). */
  automationInfo(): AutomationInformation[] {
    return this.link.directory.automationInfo();
  }

  notifyMetricsSettings(): void {
    this.link.directory.notifyMetricsSettings();
    this.relay.broadcast({ type: 'metricsSettings' });
  }

  /**
   * The other live replica whose link holds the device's gateway, with its recorded API address; undefined when
   * this replica's link holds it or no connected gateway does (the caller then goes on here and fails as usual).
   * What HTTP forwarding (api/appium-forward.ts) asks before each request of a device's session.
   */
  async remoteHolder(vendorUniqueIdentifier: string): Promise<ReplicaHolding | undefined> {
    if (this.link.holdsDevice(vendorUniqueIdentifier)) return undefined;
    return this.otherReplicaHolding(vendorUniqueIdentifier);
  }

  /** Where the device's gateway is linked: this replica, another live one, or none (the session sweeper asks). */
  async linkPlace(vendorUniqueIdentifier: string): Promise<'here' | 'elsewhere' | 'nowhere'> {
    if (this.link.holdsDevice(vendorUniqueIdentifier)) return 'here';
    return (await this.remoteHolder(vendorUniqueIdentifier)) ? 'elsewhere' : 'nowhere';
  }

  /** The live replica whose link holds the device's gateway, other than this one. */
  private async deviceOwner(vendorUniqueIdentifier: string): Promise<ReplicaHolding> {
    const owner = await this.otherReplicaHolding(vendorUniqueIdentifier);
    if (!owner) throw new GatewayUnavailableError(`No connected gateway holds device ${vendorUniqueIdentifier}.`);
    return owner;
  }

  /** The live replica other than this one whose link holds the device's gateway, with its recorded host and API address. */
  private async otherReplicaHolding(vendorUniqueIdentifier: string): Promise<ReplicaHolding | undefined> {
    const row = await this.db.selectFrom('devices').innerJoin('gateways', 'gateways.id', 'devices.gateway_id')
      .leftJoin('hub_replicas', 'hub_replicas.id', 'gateways.hub_replica')
      .select(['gateways.hub_replica', 'hub_replicas.api_address', 'hub_replicas.hostname'])
      .where('devices.vendor_unique_identifier', '=', vendorUniqueIdentifier)
      .where('gateways.connected', '=', true).where('gateways.hub_replica', '<>', thisReplica.id)
      .where(lockHeldSql(LockKind.replica, sql`gateways.hub_replica`))
      .executeTakeFirst();
    return row?.hub_replica
      ? { replicaId: row.hub_replica, apiAddress: row.api_address ?? undefined, hostname: row.hostname ?? undefined } : undefined;
  }
}

/** Another live replica whose link holds a device's gateway, as its `hub_replicas` row names it. */
export interface ReplicaHolding {
  replicaId: string;
  apiAddress?: string;
  hostname?: string;
}

/**
 * A device connection (tunnel) asked of a replica whose link does not hold the device: tunnels are not relayed
 * through PostgreSQL (a byte stream), so the caller forwards the connection to the owner's API address.
 */
export class DeviceOnOtherReplicaError extends GatewayUnavailableError {
  constructor(readonly replicaId: string, readonly apiAddress: string | undefined, message: string) {
    super(message);
    this.name = 'DeviceOnOtherReplicaError';
  }
}
