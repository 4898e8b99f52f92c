/** The JSON body of `POST /Settings?update` (`{"resetReboot":"False"}`, `{"dataPortState":"Sync"}`), read into typed settings changes. */
import { ApiFailure, DataPortStateName, parseEnumValue } from '@devicelab/shared';
import { LICENSED_DEVICES_ENV } from '../config';
import { STORED_SETTINGS, type SettingsChanges } from '../domain/hub-settings';
import { JsonBody } from '../http/json-body';
import { LEASE_SETTINGS, MAX_LEASE_SETTING_MINUTES } from '../domain/lease-settings';
import { echo } from '../http/echo';

/** The changes, read when the domain asks (after SystemManageSettings is checked); unknown keys are failures. */
export function settingsChanges(bodyText: string): () => SettingsChanges {
  return () => {
    const body = JsonBody.parse(bodyText);
    const changes: SettingsChanges = {};
    for (const key of body.keys()) {
      const name = STORED_SETTINGS.find((n) => n.toLowerCase() === key);
      if (name) {
        const value = body.bool(name);
        if (value === undefined) throw new ApiFailure(`Setting '${name}' needs a value of true or false.`);
        changes[name] = value;
      } else if (LEASE_SETTINGS.some((n) => n.toLowerCase() === key)) {
        const lease = LEASE_SETTINGS.find((n) => n.toLowerCase() === key)!;
        const value = body.int(lease);
        if (value === undefined || value === null || value < 0 || value > MAX_LEASE_SETTING_MINUTES) {
          throw new ApiFailure(`Setting '${lease}' needs a whole number of minutes from 0 to ${MAX_LEASE_SETTING_MINUTES}.`);
        }
        changes[lease] = value;
      } else if (key === 'dataportstate') {
        const text = body.string('dataPortState');
        const value = text ? parseEnumValue(DataPortStateName, text) : undefined;
        if (!value) throw new ApiFailure("Setting 'dataPortState' needs a value of Data or Sync.");
        changes.dataPortState = value;
      } else if (key === 'licenseddevicelimit') {
        throw new ApiFailure(`licensedDeviceLimit is set by the hub's ${LICENSED_DEVICES_ENV} environment variable.`);
      } else {
        throw new ApiFailure(`Unknown setting '${echo(key)}'. Settings: ${[...STORED_SETTINGS, 'dataPortState', ...LEASE_SETTINGS].join(', ')}.`);
      }
    }
    if (Object.keys(changes).length === 0) throw new ApiFailure('No settings to update.');
    return changes;
  };
}
