/**
 * The one catalog of failure codes: what a failure Result's `errorCode` can say (README "Failure codes"). A device's
 * or gateway's code travels in the link's `CommandResult.error_code` and reaches the client unchanged; the hub's own
 * refusals carry a code where one names the reason. Clients decide by code; `errorMessage` is for people.
 */

/** Who reports a code: the device itself, the gateway beside it, a USB hub, or the hub. */
export type FailureOrigin = 'device' | 'gateway' | 'USB hub' | 'hub';

interface CodeEntry { readonly meaning: string; readonly from: FailureOrigin }

export const FAILURE_CODES = {
  // The device and its connection, as the gateway finds them.
  DEVICE_NOT_CONNECTED: { from: 'gateway', meaning: 'The device is not (or no longer) connected to the gateway that was asked.' },
  DEVICE_NOT_READY: { from: 'gateway', meaning: 'The device is connected but cannot take commands yet (booting, unauthorized, offline).' },
  DEVICE_NOT_PAIRED: { from: 'device', meaning: "The iOS device refused this host's pair record; pair it again." },
  DEVICE_TIMEOUT: { from: 'gateway', meaning: 'The device did not answer within its time.' },
  DEVICE_UNREACHABLE: { from: 'gateway', meaning: 'The device could not be reached or stopped answering (adb, usbmuxd, simctl).' },
  LOCKDOWN_ERROR: { from: 'device', meaning: "The iOS device's lockdownd refused a request." },
  AFC_ERROR: { from: 'device', meaning: "The iOS device's file service (AFC) refused the upload of the app." },
  SAMPLE_UNREADABLE: { from: 'gateway', meaning: 'The device answered a metrics read with nothing the gateway can read.' },
  // Commands on the device.
  INSTALL_FAILED: { from: 'device', meaning: 'The simulator refused the install (simctl install); the text says why.' },
  DELETE_FAILED: { from: 'device', meaning: 'The simulator refused the uninstall (simctl uninstall); the text says why.' },
  PM_REFUSED: { from: 'device', meaning: "Android's package manager refused without one of its codes (`not installed for 0`); the text says why." },
  APP_NOT_LAUNCHABLE: { from: 'device', meaning: 'The Android app is not installed, has no activity to launch, or Android refused to start it.' },
  LAUNCH_FAILED: { from: 'device', meaning: 'The simulator refused to start the application (simctl launch).' },
  DEVELOPER_SERVICES_UNAVAILABLE: { from: 'gateway', meaning: 'Launching on this iOS device needs developer services the gateway does not have.' },
  REBOOT_FAILED: { from: 'device', meaning: 'The device refused to restart.' },
  // The gateway running a command.
  APP_FETCH_FAILED: { from: 'gateway', meaning: 'The gateway could not get the application binary from the hub.' },
  COMMAND_EXPIRED: { from: 'gateway', meaning: 'The command reached the gateway after its deadline and was not started.' },
  COMMAND_TIMEOUT: { from: 'gateway', meaning: 'The device did not finish the command before its deadline.' },
  INVALID_COMMAND: { from: 'gateway', meaning: 'The command lacks something it needs (a forced install without an application identifier).' },
  UNSUPPORTED_COMMAND: { from: 'gateway', meaning: 'The gateway or the device\'s platform does not offer this command.' },
  SCREEN_UNAVAILABLE: { from: 'gateway', meaning: "The device's screen capture or its input (touch, keyboard) could not be started on the device." },
  GATEWAY_ERROR: { from: 'gateway', meaning: 'The gateway failed unexpectedly; its log has the details.' },
  USB_HUB_ERROR: { from: 'USB hub', meaning: 'The USB hub refused the command, did not answer, or is not on this gateway.' },
  // The hub's own refusals.
  INVALID_PARAMETER: { from: 'hub', meaning: "A request parameter's value could not be read (bad Guid, boolean, number, date, enum value, or a NUL character); `errorParameter` names it." },
  UNKNOWN_PARAMETER: { from: 'hub', meaning: 'The request named a parameter the operation does not take; `errorParameter` names it.' },
  ENTITLEMENT_REQUIRED: { from: 'hub', meaning: 'The caller lacks the entitlement the operation needs.' },
  DEVICE_NOT_FOUND: { from: 'hub', meaning: 'No device has that Guid, serial number or vendor id.' },
  DEVICE_IN_USE: { from: 'hub', meaning: 'Someone else retains the device.' },
  DEVICE_RESERVED: { from: 'hub', meaning: 'Someone else has booked the device for now (/Reservation), or the booking overlaps theirs.' },
  DEVICE_NOT_RETAINED: { from: 'hub', meaning: 'The caller does not retain the device; retain it first.' },
  DEVICE_UNAVAILABLE: { from: 'hub', meaning: 'The device is deleted, disabled or offline.' },
  DEVICE_WAIT_TIMEOUT: { from: 'hub', meaning: 'No device matching the wait was handed over in time; the text says whether none matches or which are busy.' },
  LEASE_CONFLICT: { from: 'hub', meaning: 'The caller holds the device under another lease name (another job of the same login).' },
  LEASE_LIMIT: { from: 'hub', meaning: "The lease would end later than the lab's or the role's maximum lease length allows." },
  GATEWAY_OFFLINE: { from: 'hub', meaning: 'No connected gateway holds the device (or USB hub), or its gateway went away.' },
  RECORD_FAILED: { from: 'hub', meaning: "The device carried the command out, but the hub could not record the device's new state; read the device again before relying on it." },
  APP_NOT_PROVISIONED: { from: 'hub', meaning: "The iOS app's provisioning profile does not allow this device (UDID, expiry, iOS version)." },
  APP_WRONG_PLATFORM: { from: 'hub', meaning: 'The iOS build is for the other kind of device (phone build on a simulator, or the reverse).' },
  ADB_KEY_EXISTS: { from: 'hub', meaning: 'The user has this adb key registered already.' },
  INVALID_CAPABILITIES: { from: 'hub', meaning: 'A WebDriver new-session body the lab cannot use (not JSON, too large or deep, or a capability of the wrong kind); the text says which.' },
  AUTOMATION_SESSION_NOT_FOUND: { from: 'hub', meaning: 'No automation session of the lab has that id (never created, or deleted).' },
  AUTOMATION_SESSION_ENDED: { from: 'hub', meaning: 'The automation session ended without its client: idle too long, its device released by an admin, unplugged or its gateway gone; the text says which.' },
  AUTOMATION_START_FAILED: { from: 'gateway', meaning: "The device's Appium server could not create the session (or could not be reached); the text is its answer." },
} as const satisfies Record<string, CodeEntry>;

/**
 * Families whose members the device names itself: the prefix is catalogued, the rest is the device's reason as it
 * gave it (pm's `INSTALL_FAILED_INSUFFICIENT_STORAGE`, installd's `INSTALLD_ApplicationVerificationFailed`).
 */
export const FAILURE_CODE_FAMILIES = {
  INSTALL_FAILED_: { from: 'device', meaning: "Android's package manager refused the install; the rest is its reason (INSUFFICIENT_STORAGE, UPDATE_INCOMPATIBLE, ...)." },
  INSTALL_PARSE_FAILED_: { from: 'device', meaning: "Android's package manager could not read the APK (NO_CERTIFICATES, ...)." },
  DELETE_FAILED_: { from: 'device', meaning: "Android's package manager refused the uninstall (INTERNAL_ERROR, ...)." },
  INSTALLD_: { from: 'device', meaning: "iOS installd refused an install, uninstall or listing; the rest is its error name (ApplicationVerificationFailed, ...)." },
} as const satisfies Record<string, CodeEntry>;

export type CataloguedCode = keyof typeof FAILURE_CODES;
export type FailureCodeFamily = keyof typeof FAILURE_CODE_FAMILIES;
export type FailureCode = CataloguedCode | `${FailureCodeFamily}${string}`;

const FAMILY_MEMBER = new RegExp(`^(${Object.keys(FAILURE_CODE_FAMILIES).join('|')})[A-Za-z0-9_]+$`);

/** Whether a code received as text (from the link, from a device's output) is one of the catalog's. */
export function isFailureCode(text: string): text is FailureCode {
  return Object.hasOwn(FAILURE_CODES, text) || FAMILY_MEMBER.test(text);
}
