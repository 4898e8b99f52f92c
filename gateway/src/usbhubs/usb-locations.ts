/** Where the port-mapped driver learns a device's USB location (bus-port.port..., the hub port's natural key). */
export interface UsbLocationSource {
  /** `1-1.4.2`, or undefined when the device has no USB path (network, emulator) or is not known. */
  lookup(vendorUniqueIdentifier: string): Promise<string | undefined>;
}
