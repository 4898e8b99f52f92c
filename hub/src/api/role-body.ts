/** The JSON body of `POST /Role?add|update` (`{"name":..,"entitlements":[..]}`), read into typed role changes. */
import { ApiFailure, Entitlement, type Entitlement as EntitlementName } from '@devicelab/shared';
import { readableName } from '../domain/name-rules';
import { orderEntitlements, type RoleChanges } from '../domain/roles';
import type { BodyReader, JsonBody } from '../http/json-body';
import { echo } from '../http/echo';

const MAX_NAME_LENGTH = 100;

const unknownEntitlement = (name: string): string =>
  `Unknown entitlement '${echo(name)}'. Known entitlements: ${Entitlement.join(', ')}.`;

/** The changes, read when the domain asks (after UserRolesModify is checked). */
export function roleChanges(readBody: BodyReader): () => RoleChanges {
  return () => {
    const body = readBody();
    const unknown = body.keys().find((k) => k !== 'name' && k !== 'entitlements' && k !== 'maxleaseminutes');
    if (unknown !== undefined) {
      throw new ApiFailure(`Property '${echo(unknown)}' is not part of a role: send name, entitlements and maxLeaseMinutes.`);
    }
    const changes: RoleChanges = {};
    const name = readName(body);
    if (name !== undefined) changes.name = name;
    const entitlements = readEntitlements(body);
    if (entitlements !== undefined) changes.entitlements = entitlements;
    if (body.has('maxLeaseMinutes')) {
      const minutes = body.int('maxLeaseMinutes');
      if (minutes === undefined || (minutes !== null && (minutes < 0 || minutes > 525_600))) {
        throw new ApiFailure('maxLeaseMinutes must be a whole number of minutes from 0 to 525600, or null for the lab\'s maximum.');
      }
      changes.maxLeaseMinutes = minutes;
    }
    return changes;
  };
}

function readName(body: JsonBody): string | undefined {
  if (!body.has('name')) return undefined;
  const name = readableName(body.string('name')?.trim() ?? '', 'A role name');
  if (name === '') throw new ApiFailure('A role name must not be empty.');
  if (name.length > MAX_NAME_LENGTH) throw new ApiFailure(`A role name must not exceed ${MAX_NAME_LENGTH} characters.`);
  return name;
}

/** PascalCase wire names, matched case-insensitively, without duplicates, in the canonical order. */
function readEntitlements(body: JsonBody): EntitlementName[] | undefined {
  if (!body.has('entitlements')) return undefined;
  const raw = body.raw('entitlements');
  if (raw !== null && !Array.isArray(raw)) throw new ApiFailure('entitlements must be a list of entitlement names.');
  const byLowerName = new Map(Entitlement.map((e) => [e.toLowerCase(), e]));
  const chosen = new Set<EntitlementName>();
  for (const item of (raw as unknown[] | null) ?? []) {
    const known = typeof item === 'string' ? byLowerName.get(item.trim().toLowerCase()) : undefined;
    if (!known) throw new ApiFailure(unknownEntitlement(String(item)));
    chosen.add(known);
  }
  return orderEntitlements([...chosen]) as EntitlementName[];
}
