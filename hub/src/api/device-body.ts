/** The JSON body of `POST /Device?update` (spec 2.4 updatable properties), read into typed device changes. */
import { ApiFailure } from '@devicelab/shared';
import type { ChangeRequest } from '../domain/deferred-input';
import type { DeviceChanges } from '../domain/device-updates';
import { JsonBody } from '../http/json-body';
import { echo } from '../http/echo';
import { BAD_BOOLEAN } from '../http/params';

/** Body keys (lower case) -> property. A Map: keys such as `__proto__` must not find inherited members. */
const PROPERTIES = new Map<string, keyof DeviceChanges>([
  ['name', 'name'], ['slotnumber', 'slotNumber'], ['notes', 'notes'], ['enabled', 'enabled'], ['deleted', 'deleted'],
]);

/** The body, parsed when the domain first asks (after DeviceList is checked). */
export function deviceChangeRequest(bodyText: string): ChangeRequest<DeviceChanges> {
  let body: JsonBody | undefined;
  const parsed = () => (body ??= JsonBody.parse(bodyText));
  return {
    properties: () => parsed().keys().flatMap((key) => PROPERTIES.get(key) ?? []),
    read: () => readDeviceChanges(parsed()),
  };
}

/** Any unknown property or invalid value fails the whole update. */
function readDeviceChanges(body: JsonBody): DeviceChanges {
  const keys = body.keys();
  const unknown = keys.filter((k) => !PROPERTIES.has(k));
  if (unknown.length > 0) {
    throw new ApiFailure(`Device property '${echo(unknown[0])}' cannot be updated. Updatable: name, slotNumber, notes, enabled, deleted.`);
  }
  if (keys.length === 0) throw new ApiFailure('No device properties to update.');
  const changes: DeviceChanges = {};
  if (body.has('name')) {
    const name = body.string('name')?.trim();
    if (!name) throw new ApiFailure('Device name cannot be empty.');
    changes.name = name;
  }
  if (body.has('slotNumber')) changes.slotNumber = body.int('slotNumber') ?? null;
  if (body.has('notes')) changes.notes = body.string('notes') || null;
  for (const flag of ['enabled', 'deleted'] as const) {
    if (!body.has(flag)) continue;
    const value = body.bool(flag);
    if (value === undefined) throw new ApiFailure(BAD_BOOLEAN);
    changes[flag] = value;
  }
  return changes;
}
