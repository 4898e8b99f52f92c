/**
 * Names of the databases a jest run creates: `devicelab_test_<jest pid>_<start time, base 36>_<what>`. The pid
 * and time in the name let a later run recognise databases left behind by a killed run (dead pid, or old)
 * without touching those of a run that is still going (another engineer's jest on the same server).
 */
export const TEST_DATABASE_PREFIX = 'devicelab_test_';

/** Environment handed from globalSetup to the jest workers (jest copies globalSetup's process.env to them). */
export const TEST_ENV = {
  serverUrl: 'DEVICELAB_TEST_SERVER_URL',
  templateName: 'DEVICELAB_TEST_TEMPLATE',
  runId: 'DEVICELAB_TEST_RUN_ID',
} as const;

export function newRunId(now = Date.now()): string {
  return `${process.pid}_${Math.floor(now / 1000).toString(36)}`;
}

export function templateNameFor(runId: string): string {
  return `${TEST_DATABASE_PREFIX}${runId}_tpl`;
}

let counter = 0;
/** A fresh database name for one test file: run, worker pid, counter, and a random tail. */
export function testDatabaseNameFor(runId: string): string {
  counter += 1;
  const tail = Math.floor(Math.random() * 36 ** 4).toString(36);
  return `${TEST_DATABASE_PREFIX}${runId}_${process.pid}_${counter}_${tail}`;
}

export interface ParsedTestDatabaseName {
  runPid: number;
  startedAt: Date;
  runId: string;
}

export function parseTestDatabaseName(name: string): ParsedTestDatabaseName | undefined {
  const match = /^devicelab_test_(\d+)_([0-9a-z]+)_/.exec(name);
  if (!match) return undefined;
  return {
    runPid: Number.parseInt(match[1], 10),
    startedAt: new Date(Number.parseInt(match[2], 36) * 1000),
    runId: `${match[1]}_${match[2]}`,
  };
}
