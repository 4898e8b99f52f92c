/**
 * Entitlement wire names (PascalCase, as in the vendor's error texts; wire rule 18 of docs/wire-rules.md).
 * The spec's labels map to these: "Device list" -> DeviceList, "View gateways" -> SystemViewGateways, ...
 */
export const Entitlement = [
  'ApplicationList', 'ApplicationModify', 'ApplicationDelete', 'ApplicationUpload',
  'DeviceApplicationManagement', 'DeviceConnect', 'DeviceList', 'DeviceModify', 'DeviceDelete', 'DeviceReboot',
  'DeviceEnablement', 'DeviceReleaseAny',
  'SystemManageUsbHubs', 'SystemViewGateways', 'SystemManageSettings',
  'UserList', 'UserModify', 'UserModifySelf', 'UserImport', 'UserRolesModify',
] as const;
export type Entitlement = (typeof Entitlement)[number];

export const ADMINISTRATOR_ROLE = 'Administrator';
export const TESTER_ROLE = 'Tester';

/** Built-in role entitlements. Administrator holds everything; Tester can use devices and apps, not administer. */
export const builtInRoles: Record<string, readonly Entitlement[]> = {
  [ADMINISTRATOR_ROLE]: Entitlement,
  [TESTER_ROLE]: [
    'ApplicationList', 'ApplicationUpload', 'DeviceApplicationManagement', 'DeviceConnect', 'DeviceList',
    'DeviceReboot', 'SystemViewGateways', 'UserModifySelf',
  ],
};

export function missingEntitlementMessage(name: Entitlement): string {
  return `User does not have required entitlement: ${name}`;
}
