/** The one migration set, in order. An in-code provider works under ts-jest and in the build alike. */
import type { Migration, MigrationProvider } from 'kysely';
import * as records from './001_records';
import * as hubSettings from './002_hub_settings';
import * as userAccounts from './005_user_accounts';
import * as eventReports from './006_event_reports';
import * as retainIds from './007_retain_ids';
import * as metrics from './009_metrics';
import * as metricsBatches from './010_metrics_batches';
import * as asyncJobIntents from './011_async_job_intents';
import * as userAdbKeys from './012_user_adb_keys';
import * as webSessions from './013_web_sessions';
import * as listChanges from './014_list_changes';
import * as applicationPlatform from './015_application_platform';
import * as provisionedDevices from './016_provisioned_devices';
import * as webhooks from './017_webhooks';
import * as gatewayFleet from './018_gateway_fleet';
import * as hubReplicas from './019_hub_replicas';
import * as blobs from './020_blobs';
import * as retainFunctions from './022_retain_functions';
import * as jobProgress from './024_job_progress';
import * as retainPlans from './025_retain_plans';
import * as listStampRows from './026_list_stamp_rows';
import * as installedRecords from './027_installed_records';
import * as historyChanges from './028_history_changes';
import * as availabilityCauses from './029_availability_causes';
import * as reservations from './030_reservations';
import * as applicationUploader from './031_application_uploader';
import * as boundedIcons from './032_bounded_icons';
import * as automationSessions from './033_automation_sessions';
import * as waitingLine from './034_waiting_line';
import * as deviceLeases from './035_device_leases';
import * as screenShares from './037_screen_shares';
import * as tableChangeNotices from './038_table_change_notices';
import * as lineHandOver from './039_line_hand_over';
import * as reservationChanges from './040_reservation_changes';
import * as automationHistory from './041_automation_history';

const migrations: Record<string, Migration> = {
  '001_records': records,
  '002_hub_settings': hubSettings,
  '005_user_accounts': userAccounts,
  '006_event_reports': eventReports,
  '007_retain_ids': retainIds,
  '009_metrics': metrics,
  '010_metrics_batches': metricsBatches,
  '011_async_job_intents': asyncJobIntents,
  '012_user_adb_keys': userAdbKeys,
  '013_web_sessions': webSessions,
  '014_list_changes': listChanges,
  '015_application_platform': applicationPlatform,
  '016_provisioned_devices': provisionedDevices,
  '017_webhooks': webhooks,
  '018_gateway_fleet': gatewayFleet,
  '019_hub_replicas': hubReplicas,
  '020_blobs': blobs,
  '022_retain_functions': retainFunctions,
  '024_job_progress': jobProgress,
  '025_retain_plans': retainPlans,
  '026_list_stamp_rows': listStampRows,
  '027_installed_records': installedRecords,
  '028_history_changes': historyChanges,
  '029_availability_causes': availabilityCauses,
  '030_reservations': reservations,
  '031_application_uploader': applicationUploader,
  '032_bounded_icons': boundedIcons,
  '033_automation_sessions': automationSessions,
  '034_waiting_line': waitingLine,
  '035_device_leases': deviceLeases,
  '037_screen_shares': screenShares,
  '038_table_change_notices': tableChangeNotices,
  '039_line_hand_over': lineHandOver,
  '040_reservation_changes': reservationChanges,
  '041_automation_history': automationHistory,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
