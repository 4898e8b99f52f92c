/** Entitlement guard (wire-decisions rules 18-19): checked before any existence or state check. */
import { ApiFailure, missingEntitlementMessage, type Entitlement } from '@devicelab/shared';
import type { AuthenticatedUser } from './authenticated-user';

export function hasEntitlement(user: AuthenticatedUser, name: Entitlement): boolean {
  return user.entitlements.has(name);
}

export function requireEntitlement(user: AuthenticatedUser, name: Entitlement): void {
  if (!user.entitlements.has(name)) throw new ApiFailure(missingEntitlementMessage(name), 'ENTITLEMENT_REQUIRED');
}
