/**
 * Who may open a device's live screen, and as what. The retainer controls it (or watches only, if they ask). A
 * holder of a view-only share of the current retain (its link token, or a share naming them) watches, and so does
 * a user with DeviceReleaseAny, on any device. Anyone else gets nothing. The device must be enabled and not
 * deleted. Every view-only viewer who joins is a SharedViewOnlySessionCreated event: who, from where, through what.
 * The gateway checks the same retain again and drops a view-only viewer's input (gateway/src/screen/).
 */
import { ApiFailure } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { hasEntitlement } from '../auth/entitlements';
import { withTx, type Db } from '../store/database';
import { resolveDevice } from './device-queries';
import { recordEvent } from './events';
import { findScreenShare } from './screen-shares';

export interface ScreenGrant {
  deviceId: string;
  deviceName: string;
  vendorUniqueIdentifier: string;
  /** The retain the viewer's right stands on; '' for a device nobody retains (an administrator watching). */
  retainId: string;
  viewOnly: boolean;
  /** How a view-only viewer got in: a share (its id), or their DeviceReleaseAny. Undefined for the retainer. */
  through?: { shareId: string } | { administrator: true };
}

export interface ScreenRequest {
  /** The retainer asks to watch only. */
  viewOnly: boolean;
  /** A share link's token (`share=`). */
  shareToken?: string;
}

export async function authorizeScreen(db: Db, user: AuthenticatedUser, identifier: string, request: ScreenRequest): Promise<ScreenGrant> {
  const device = await resolveDevice(db, identifier);
  if (device.deleted) throw new ApiFailure('Device is deleted.', 'DEVICE_UNAVAILABLE');
  if (!device.enabled) throw new ApiFailure('Device is disabled.', 'DEVICE_UNAVAILABLE');
  const base = {
    deviceId: device.id, deviceName: device.name, vendorUniqueIdentifier: device.vendor_unique_identifier, retainId: device.retain_id ?? '',
  };
  if (device.retain_id && device.retained_by === user.id) return { ...base, viewOnly: request.viewOnly };
  const shareId = device.retain_id ? await findScreenShare(db, device.id, device.retain_id, user, request.shareToken) : undefined;
  if (shareId) return { ...base, viewOnly: true, through: { shareId } };
  if (hasEntitlement(user, 'DeviceReleaseAny')) return { ...base, viewOnly: true, through: { administrator: true } };
  throw new ApiFailure(`The screen of device '${device.name}' is its retainer's; you hold no view-only share of it.`, 'DEVICE_NOT_RETAINED');
}

/** A view-only viewer joined: the SharedViewOnlySessionCreated event (who, from where, through what). */
export async function recordViewOnlyJoin(db: Db, grant: ScreenGrant, user: AuthenticatedUser, remoteAddress: string): Promise<void> {
  const how = grant.through && 'shareId' in grant.through ? `through share ${grant.through.shareId}` : 'as an administrator';
  await withTx(db, (trx) => recordEvent(trx, {
    eventType: 'SharedViewOnlySessionCreated', deviceId: grant.deviceId, deviceName: grant.deviceName,
    performedById: user.id, performedByName: user.displayName, stringValue: remoteAddress.slice(0, 200),
    message: `View-only screen of '${grant.deviceName}' opened by ${user.login} from ${remoteAddress} ${how}`.slice(0, 1000),
  }));
}
