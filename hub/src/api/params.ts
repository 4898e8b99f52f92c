/** Reading resource-specific parameters (filters, identifiers) from the merged request parameters. */
import { ApiFailure, DeviceAvailabilityStatus, DeviceOperatingSystem } from '@devicelab/shared';
import type { ApplicationFilters } from '../domain/applications';
import type { DeviceDetailOptions } from '../domain/device-mapping';
import type { DeviceFilters } from '../domain/devices';
import { readFilter } from '../domain/waiting-line';
import { echo } from '../http/echo';
import type { RequestParams } from '../http/params';

export function requireString(params: RequestParams, ...names: string[]): string {
  const value = params.stringOf(...names);
  if (value === undefined) throw new ApiFailure(`Parameter '${names[0]}' is required.`);
  return value;
}

export function requireGuid(params: RequestParams, name: string): string {
  const value = params.guid(name);
  if (value === undefined) throw new ApiFailure(`Parameter '${name}' is required.`);
  return value;
}

export function deviceFilters(params: RequestParams): DeviceFilters {
  return {
    id: params.guid('id'),
    name: params.string('name'),
    operatingSystem: params.enum('operatingSystem', DeviceOperatingSystem, { ios: 'iOS' }),
    availability: params.enum('availability', DeviceAvailabilityStatus),
    enabled: params.bool('enabled'),
    deleted: params.bool('deleted'),
    slotNumber: params.int('slotNumber'),
    notes: params.string('notes'),
    anyId: params.string('anyId'),
    vendorUniqueIdentifier: params.string('vendorUniqueIdentifier'),
    operatingSystemVersion: params.string('operatingSystemVersion'),
    retained: params.bool('retained'),
    retainedBy: params.string('retainedBy'),
    retainedByDisplayName: params.string('retainedByDisplayName'),
    bundleInstalled: params.string('bundleInstalled'),
    disableMetrics: params.bool('disableMetrics'),
    filter: params.has('filter') ? readFilter(params.string('filter')) : undefined,
  };
}

export function deviceDetailOptions(params: RequestParams): DeviceDetailOptions {
  return {
    properties: params.bool('properties') ?? false,
    applications: params.bool('applications') ?? false,
    allApplications: params.bool('allApplications') ?? false,
  };
}

export function applicationFilters(params: RequestParams): ApplicationFilters {
  return {
    id: params.guid('id'),
    displayName: params.string('displayName'),
    applicationIdentifier: params.string('applicationIdentifier'),
    version: params.string('version'),
    buildVersion: params.string('buildVersion'),
    operatingSystem: params.enum('operatingSystem', DeviceOperatingSystem),
    minimumOperatingSystemVersion: params.string('minimumOperatingSystemVersion'),
    applicationBlob: params.string('applicationBlob'),
    originalApplicationBlob: params.string('originalApplicationBlob'),
    fileName: params.string('fileName'),
    idOrName: params.string('idOrName'),
    buildVersionOrVersion: params.string('buildVersionOrVersion'),
    uploadedVersionCounter: params.int('uploadedVersionCounter'),
    provisionsAllDevices: params.bool('provisionsAllDevices'),
  };
}

export const unknownAction = (name: string): string => `Unknown action '${echo(name)}'.`;

/** The verb or action of a POST, for dispatch: `action:<name>` or `verb:<name>`; ApiFailure when there is none. */
export function postOperation(params: RequestParams): string {
  const action = params.action();
  if (action !== undefined) return `action:${action}`;
  const verb = params.verb();
  if (verb !== undefined) return `verb:${verb}`;
  throw new ApiFailure('No operation given: expected an action or one of update, delete, add.');
}

export function operationName(op: string): string {
  return op.slice(op.indexOf(':') + 1);
}
