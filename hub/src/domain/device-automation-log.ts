/**
 * GET /Device/AppiumLog (spec 4.2): the automation server's output. No automation server runs on the gateways
 * yet, so every device's log is empty: `{"isSuccess":true,"data":""}` after the usual entitlement and device
 * checks, whatever `currentSessionOnly` says.
 */
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { requireEntitlement } from '../auth/entitlements';
import type { Db } from '../store/database';
import { resolveDevice } from './device-queries';

export async function readAutomationLog(
  db: Db, user: AuthenticatedUser, identifier: string, _options: { currentSessionOnly?: boolean } = {},
): Promise<string> {
  requireEntitlement(user, 'DeviceList');
  await resolveDevice(db, identifier);
  return '';
}
