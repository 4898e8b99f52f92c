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
import * as webSessions from './013_web_sessions';

const migrations: Record<string, Migration> = {
  '001_records': records,
  '002_hub_settings': hubSettings,
  '005_user_accounts': userAccounts,
  '006_event_reports': eventReports,
  '007_retain_ids': retainIds,
  '009_metrics': metrics,
  '010_metrics_batches': metricsBatches,
  '011_async_job_intents': asyncJobIntents,
  '013_web_sessions': webSessions,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
