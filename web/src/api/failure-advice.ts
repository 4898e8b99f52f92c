/**
 * What the dashboard adds to a failure, chosen by its `errorCode` (README "Failure codes"); the catalog's type is
 * imported type-only, so a code it no longer has fails the dashboard's type check.
 */
import type { FailureCode } from '../../../shared/src/failure-codes';

const ADVICE: Partial<Record<FailureCode, string>> = {
  INSTALL_FAILED_INSUFFICIENT_STORAGE: 'The device is out of storage: uninstall apps from it, or pick another device.',
  INSTALL_FAILED_UPDATE_INCOMPATIBLE: 'The device has this app signed differently: uninstall it first.',
  INSTALL_FAILED_VERSION_DOWNGRADE: 'The device has a newer build of this app: uninstall it first.',
  APP_NOT_LAUNCHABLE: 'Install the app on this device first; it must have an activity to launch.',
  APP_NOT_PROVISIONED: "Upload a build whose provisioning profile lists this device's UDID.",
  APP_WRONG_PLATFORM: 'Upload the build for this kind of device (simulator or phone).',
  DEVICE_IN_USE: 'Someone else holds the device.',
  DEVICE_NOT_RETAINED: 'Retain the device first.',
  GATEWAY_OFFLINE: "The device's gateway is not connected; see the Lab page.",
};

/** The hub's message, followed by the advice for its code when there is one. */
export function failureText(message: string, code: FailureCode | undefined): string {
  const advice = code === undefined ? undefined : ADVICE[code];
  return advice ? `${message} ${advice}` : message;
}
