/**
 * Which device hangs from which hub port. From the USB location where the OS exposes it (adb's `usb:1-1.4.2`:
 * a device at `<hub location>.<port>` is on that port), else from the gateway configuration (hub serial,
 * port, device serial). The configuration wins, so a lab can pin what the topology cannot tell.
 */
export interface PortAssignment {
  hubSerialNumber: string;
  port: number;
}

export interface ConfiguredPort extends PortAssignment {
  /** Vendor unique identifier (adb serial / UDID) or hardware serial number of the device. */
  device: string;
}

export interface DeviceIdentity {
  vendorUniqueIdentifier: string;
  serialNumber?: string;
  usbLocation?: string;
}

export class PortMap {
  /** Devices seen on ports through their USB location, so an unplugged port still names its device. */
  private readonly seen = new Map<string, string>();

  constructor(
    private readonly configured: ConfiguredPort[],
    /** Hub serial -> the hub's own USB location (`1-1.4`), for hubs whose ports are direct children. */
    private readonly hubLocations: () => Map<string, string>,
  ) {}

  portOf(device: DeviceIdentity): PortAssignment | undefined {
    const ids = [device.vendorUniqueIdentifier, device.serialNumber].filter((id): id is string => !!id);
    const pinned = this.configured.find((entry) => ids.includes(entry.device));
    if (pinned) return { hubSerialNumber: pinned.hubSerialNumber, port: pinned.port };
    const location = device.usbLocation?.replace(/^usb:/, '');
    if (!location) return undefined;
    for (const [hubSerialNumber, hubLocation] of this.hubLocations()) {
      const m = location.startsWith(`${hubLocation}.`) ? /^(\d+)$/.exec(location.slice(hubLocation.length + 1)) : null;
      if (m) {
        const found = { hubSerialNumber, port: Number(m[1]) };
        this.seen.set(key(found), device.vendorUniqueIdentifier);
        return found;
      }
    }
    return undefined;
  }

  /** The device that belongs on a port (configured, else last seen there). */
  deviceOn(hubSerialNumber: string, port: number): string | undefined {
    return this.configured.find((entry) => entry.hubSerialNumber === hubSerialNumber && entry.port === port)?.device
      ?? this.seen.get(key({ hubSerialNumber, port }));
  }
}

const key = (at: PortAssignment) => `${at.hubSerialNumber}#${at.port}`;

/** `HUB1:3=R58M123,HUB1:4=emulator-5554`: hub serial, port, device. Throws on a malformed entry. */
export function parsePortMap(text: string | undefined): ConfiguredPort[] {
  if (!text?.trim()) return [];
  return text.split(',').map((entry) => entry.trim()).filter(Boolean).map((entry) => {
    const m = /^([^:=\s]+):(\d+)=(\S+)$/.exec(entry);
    if (!m || Number(m[2]) < 1) throw new Error(`Bad USB port map entry '${entry}': expected <hub serial>:<port>=<device serial>`);
    return { hubSerialNumber: m[1], port: Number(m[2]), device: m[3] };
  });
}
