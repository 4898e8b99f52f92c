/**
 * Why a device is or is not usable, as the gateway sees it (GADS-style explicit readiness). The hub derives
 * availability from it: only `Ready` is Online.
 */
export const DeviceReadiness = ['Ready', 'Unauthorized', 'Offline', 'Booting', 'Detached'] as const;
export type DeviceReadiness = (typeof DeviceReadiness)[number];
