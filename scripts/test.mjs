#!/usr/bin/env node
// Runs every test of the workspace with jest, after type-checking sources and tests together
// (jest itself only transpiles). Tests use real PostgreSQL: TEST_DATABASE_URL when set, else an embedded
// server that the jest global setup starts for the run. Ends with a plain `N passed, N failed` line.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const node = (script, args) =>
  spawnSync(process.execPath, [path.join(root, script), ...args], { cwd: root, stdio: 'inherit' }).status ?? 1;

process.stderr.write('[test] type-checking sources and tests\n');
if (node('node_modules/typescript/bin/tsc', ['-p', 'tsconfig.test.json']) !== 0) process.exit(1);

const reportDir = mkdtempSync(path.join(os.tmpdir(), 'devicelab-jest-'));
const report = path.join(reportDir, 'results.json');
const status = node('node_modules/jest/bin/jest.js', [...process.argv.slice(2), '--json', `--outputFile=${report}`]);
try {
  const { numPassedTests, numFailedTests, numPendingTests } = JSON.parse(readFileSync(report, 'utf8'));
  process.stdout.write(`\n${numPassedTests} passed, ${numFailedTests} failed${numPendingTests ? `, ${numPendingTests} skipped` : ''}\n`);
} catch {
  // jest stopped before writing its report (bad arguments, setup failure): its own output says why.
} finally {
  rmSync(reportDir, { recursive: true, force: true });
}
process.exit(status);
