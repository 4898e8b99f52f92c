/**
 * Finds the offered simulators in the host's simulator set, creating those that are missing: a
 * `<type>:<runtime>*n` offer is n simulators named `DeviceLab <type> #1..n` on that runtime (found again by that
 * name after a restart), an existing UDID is taken as it is. Resolves with the UDIDs, in the order offered.
 */
import type { Logger } from '@devicelab/shared';
import type { Simctl } from 'node-simctl';
import { offeredSimulatorName, type SimulatorOffer } from './simulator-offers';
import { findRuntime, readListing } from './simctl-list';

export async function resolveOfferedSimulators(simctl: Simctl, offers: SimulatorOffer[], logger: Logger): Promise<string[]> {
  const listing = readListing(await simctl.list());
  const udids: string[] = [];
  const taken = new Map<string, number>();
  for (const offer of offers) {
    if (offer.kind === 'existing') {
      if (listing.devices.some((d) => d.udid === offer.udid)) udids.push(offer.udid);
      else logger.warn({ udid: offer.udid }, 'DEVICELAB_SIMULATORS names a simulator this host does not have; skipped');
      continue;
    }
    const type = listing.deviceTypes.find((t) => t.name === offer.deviceType || t.identifier === offer.deviceType);
    const runtime = findRuntime(listing.runtimes, offer.platform, offer.version);
    if (!type || !runtime) {
      logger.warn({ deviceType: offer.deviceType, runtime: `${offer.platform} ${offer.version}`,
        deviceTypes: listing.deviceTypes.map((t) => t.name), runtimes: listing.runtimes.map((r) => r.name) },
      `DEVICELAB_SIMULATORS: this host has no ${type ? 'runtime' : 'device type'} of that name; skipped`);
      continue;
    }
    const key = `${type.identifier} ${runtime.identifier}`;
    for (let n = 0; n < offer.count; n++) {
      const index = (taken.get(key) ?? 0) + 1;
      taken.set(key, index);
      const name = offeredSimulatorName(type.name, index);
      const existing = listing.devices.find((d) => d.name === name && d.runtimeIdentifier === runtime.identifier && d.isAvailable !== false);
      if (existing) {
        udids.push(existing.udid);
        continue;
      }
      const udid = await simctl.createDevice(name, type.identifier, runtime.version, { platform: runtime.platform ?? offer.platform });
      logger.info({ udid, name, runtime: runtime.name }, 'created an iOS simulator');
      udids.push(udid);
    }
  }
  return udids;
}
