/** Entitlement guard (wire rules 18-19, docs/wire-rules.md): checked before any existence or state check. */
import { ApiFailure, missingEntitlementMessage, type Entitlement } from '@devicelab/shared';
import type { AuthenticatedUser } from './authenticated-user';

export function hasEntitlement(user: AuthenticatedUser, name: Entitlement): boolean {
  return user.entitlements.has(name);
}

/** The failure of a caller who lacks `name`: the vendor's text, and the code clients decide by. */
export function missingEntitlement(name: Entitlement): ApiFailure {
  return new ApiFailure(missingEntitlementMessage(name), 'ENTITLEMENT_REQUIRED');
}

export function requireEntitlement(user: AuthenticatedUser, name: Entitlement): void {
  if (!user.entitlements.has(name)) throw missingEntitlement(name);
}
