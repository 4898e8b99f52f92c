/**
 * Which simulators a gateway offers (DEVICELAB_SIMULATORS, read in main.ts): comma separated entries, each an
 * existing simulator's UDID or `<device type>:<runtime>[*count]` (`iPhone 15:iOS-17-5*2`). The runtime is a
 * CoreSimulator runtime id suffix (`iOS-17-5`), its name (`iOS 17.5`) or a bare iOS version (`17.5`).
 */
export type SimulatorOffer =
  | { kind: 'existing'; udid: string }
  | { kind: 'create'; deviceType: string; platform: string; version: string; count: number };

const UDID = /^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$/i;
const MAX_PER_ENTRY = 64;

export function parseSimulatorOffers(text: string): SimulatorOffer[] {
  return text.split(',').map((part) => part.trim()).filter(Boolean).map((part): SimulatorOffer => {
    if (UDID.test(part)) return { kind: 'existing', udid: part.toUpperCase() };
    const colon = part.lastIndexOf(':');
    if (colon <= 0) throw new Error(`DEVICELAB_SIMULATORS entry ${JSON.stringify(part)}: expected a UDID or "<device type>:<runtime>[*count]"`);
    const deviceType = part.slice(0, colon).trim();
    const m = /^(.+?)(?:\s*\*\s*(\d+))?$/.exec(part.slice(colon + 1).trim());
    const runtime = m ? parseRuntime(m[1]) : undefined;
    const count = m?.[2] === undefined ? 1 : Number(m[2]);
    if (!runtime) throw new Error(`DEVICELAB_SIMULATORS entry ${JSON.stringify(part)}: the runtime is not like iOS-17-5, "iOS 17.5" or 17.5`);
    if (count < 1 || count > MAX_PER_ENTRY) throw new Error(`DEVICELAB_SIMULATORS entry ${JSON.stringify(part)}: the count must be 1 to ${MAX_PER_ENTRY}`);
    return { kind: 'create', deviceType, ...runtime, count };
  });
}

/** `iOS-17-5`, `com.apple.CoreSimulator.SimRuntime.iOS-17-5`, `iOS 17.5`, `17.5` -> platform and dotted version. */
function parseRuntime(text: string): { platform: string; version: string } | undefined {
  const m = /^(?:com\.apple\.CoreSimulator\.SimRuntime\.)?(?:([A-Za-z]+)[\s-]?)?(\d+(?:[.-]\d+){0,2})$/.exec(text.trim());
  if (!m) return undefined;
  return { platform: m[1] ?? 'iOS', version: m[2].replace(/-/g, '.') };
}

/** The stable name a created simulator gets, by which the gateway finds it again after a restart. */
export function offeredSimulatorName(deviceTypeName: string, index: number): string {
  return `DeviceLab ${deviceTypeName} #${index}`;
}
