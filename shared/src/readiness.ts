/**
 * Why a device is or is not usable, as the gateway sees it (GADS-style explicit readiness). The hub derives
 * availability from it: only `Ready` is Online.
 */
export const DeviceReadiness = ['Ready', 'Unauthorized', 'Offline', 'Booting', 'Detached'] as const;
export type DeviceReadiness = (typeof DeviceReadiness)[number];

/**
 * Readiness as the hub keeps and publishes it (Device extension field `readiness`): the gateway's, plus the
 * hub's own `Rebooting`, held from a reboot request until the gateway reports the device Ready again.
 */
export const DeviceReadinessState = [...DeviceReadiness, 'Rebooting'] as const;
export type DeviceReadinessState = (typeof DeviceReadinessState)[number];
