/** The DEVICELAB_SIM syntax: which simulated devices a lab starts with, Android, iOS and iOS simulators. */
import { ANDROID_PRESETS, type AndroidDeviceSpec, DEFAULT_PRESET_ORDER, specFromPreset } from './android/spec';
import { DEFAULT_IOS_PRESET_ORDER, IOS_PRESETS, type IosDeviceSpec, iosSpecFromPreset } from './ios/spec';

export interface SimMix {
  android: AndroidDeviceSpec[];
  ios: IosDeviceSpec[];
  /** iOS simulators behind the fake xcrun (`simulator=2`), for a gateway's simulator driver. */
  simulators: number;
  /** Entries this package does not simulate, left for other simulators. */
  other: Record<string, number>;
}

/**
 * Comma separated `kind=count`. Android kinds: `android` (catalogue order), `phone`, `tablet`, or a preset name
 * (`pixel-7=2`); iOS kinds: `ios` (catalogue order), `iphone`, `ipad`, or an iOS preset name (`iphone-13=1`);
 * `simulator` (iOS simulators through the fake xcrun). Unknown kinds are returned in `other`. `udid=<UDID>` gives
 * the next iOS device of the mix (in order) that UDID, so that a lab device can be one a provisioning profile lists.
 */
export function parseSimMix(text: string): SimMix {
  const mix: SimMix = { android: [], ios: [], simulators: 0, other: {} };
  let index = 0;
  let iosIndex = 0;
  const phones = DEFAULT_PRESET_ORDER.filter((p) => ANDROID_PRESETS[p].formFactor === 'phone');
  const tablets = DEFAULT_PRESET_ORDER.filter((p) => ANDROID_PRESETS[p].formFactor === 'tablet');
  const iphones = DEFAULT_IOS_PRESET_ORDER.filter((p) => IOS_PRESETS[p].deviceClass === 'iPhone');
  const ipads = DEFAULT_IOS_PRESET_ORDER.filter((p) => IOS_PRESETS[p].deviceClass === 'iPad');
  const udids: string[] = [];
  for (const part of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const pinned = /^udid\s*=\s*([0-9a-f-]{24,64})$/i.exec(part);
    if (pinned) {
      udids.push(pinned[1]);
      continue;
    }
    const m = /^([a-z0-9.-]+)\s*=\s*(\d+)$/i.exec(part);
    if (!m) throw new Error(`invalid DEVICELAB_SIM entry ${JSON.stringify(part)} (expected kind=count)`);
    const kind = m[1].toLowerCase();
    const count = Number(m[2]);
    const pool = kind === 'android' ? DEFAULT_PRESET_ORDER : kind === 'phone' ? phones : kind === 'tablet' ? tablets : ANDROID_PRESETS[kind] ? [kind] : null;
    const iosPool = kind === 'ios' ? DEFAULT_IOS_PRESET_ORDER : kind === 'iphone' ? iphones : kind === 'ipad' ? ipads : IOS_PRESETS[kind] ? [kind] : null;
    if (kind === 'simulator' || kind === 'simulators') {
      mix.simulators += count;
    } else if (pool) {
      for (let i = 0; i < count; i++, index++) mix.android.push(specFromPreset(pool[i % pool.length], index));
    } else if (iosPool) {
      for (let i = 0; i < count; i++, iosIndex++) mix.ios.push(iosSpecFromPreset(iosPool[i % iosPool.length], iosIndex));
    } else {
      mix.other[kind] = (mix.other[kind] ?? 0) + count;
    }
  }
  if (udids.length > mix.ios.length) throw new Error(`DEVICELAB_SIM names ${udids.length} UDIDs for ${mix.ios.length} iOS devices`);
  udids.forEach((udid, i) => { mix.ios[i] = { ...mix.ios[i], udid }; });
  return mix;
}
