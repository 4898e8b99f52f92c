/** GET /Service: HubInformation (spec 2.3, 4.6). */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { formatWireDate, type BuildToolInformation, type DeviceGatewayInformation, type HubInformation } from '@devicelab/shared';
import type { GatewayDirectory } from '../gateways/gateway-directory';

interface ServiceIdentity { serviceNodeId: string; serviceVersion: string }

/** Local time with its UTC offset, e.g. `2024-05-01T14:03:07+02:00`. */
function formatLocalDateTime(date: Date): string {
  const pad = (n: number) => String(Math.trunc(Math.abs(n))).padStart(2, '0');
  const offset = -date.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:`
    + `${pad(date.getMinutes())}:${pad(date.getSeconds())}${sign}${pad(offset / 60)}:${pad(offset % 60)}`;
}

/** A hub process serving this lab (extension: GET /Service lists the replicas). */
export interface WireHubReplica { id: string; hostname: string; version: string; startedAt: string }

/** A live replica as the registry lists it (fleet/replica-registry.ts). */
interface ServingReplica { id: string; hostname: string; version: string; startedAt: Date }

/** HubInformation plus the live replicas (gateways of every replica are listed). */
export function describeService(
  gateways: GatewayDirectory, identity: ServiceIdentity, replicas: ServingReplica[], now: Date = new Date(),
): HubInformation & { hubReplicas: WireHubReplica[] } {
  const automationByGateway = new Map(gateways.automationInfo().map((info) => [info.gatewayName, info]));
  const gatewayInformation = gateways.connectedGateways().map((g): DeviceGatewayInformation => {
    // No gateway reports build tools yet: the list is empty, under both names.
    const buildTool: BuildToolInformation[] = [];
    // The gateway's Appium installation; a gateway that reported none (an older one) has an empty list.
    const reported = automationByGateway.get(g.name);
    const automation: DeviceGatewayInformation['automation'] = reported?.version
      ? [{ path: reported.path, version: reported.version, pathHash: reported.pathHash, drivers: reported.drivers }]
      : [];
    const configurationError = reported?.configurationError || undefined;
    return {
      ServiceNodeId: g.id,
      ServiceVersion: g.version,
      deviceConnectNodeId: g.id,
      deviceConnectVersion: g.version,
      systemDateTime: formatLocalDateTime(now),
      systemDateTimeUtc: formatWireDate(now),
      deviceVendorUniqueIdentifiers: [...g.deviceVendorUniqueIdentifiers],
      buildTool,
      xcode: buildTool,
      automation,
      appium: automation.map(({ path: toolPath, version, pathHash }) => ({ path: toolPath, version, patchHash: pathHash })),
      automationConfigurationError: configurationError,
      appiumConfigurationError: configurationError,
    };
  });
  return {
    ServiceNodeId: identity.serviceNodeId,
    ServiceVersion: identity.serviceVersion,
    deviceConnectNodeId: identity.serviceNodeId,
    deviceConnectVersion: identity.serviceVersion,
    systemDateTime: formatLocalDateTime(now),
    systemDateTimeUtc: formatWireDate(now),
    deviceGatewayInformation: gatewayInformation,
    gatewayInformation,
    hubReplicas: replicas.map((replica) => ({
      id: replica.id, hostname: replica.hostname, version: replica.version, startedAt: formatWireDate(replica.startedAt),
    })),
  };
}

/**
 * describeService that answers the same object for as long as what it describes is the same (within one second of
 * the clock, the same gateways and replicas): its serialised bytes are then made once, not per request
 * (http/kept-json.ts keeps them per object).
 */
export function sameServiceDescription(): typeof describeService {
  let last: ReturnType<typeof describeService> | undefined;
  return (...args) => {
    const description = describeService(...args);
    if (last === undefined || !isDeepStrictEqual(last, description)) last = description;
    return last;
  };
}

/** The hub package version (hub/package.json, found from src/ and dist/ alike). */
export function hubVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}
