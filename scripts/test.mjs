#!/usr/bin/env node
// Runs every test of the workspace with jest, after type-checking sources and tests together
// (jest itself only transpiles). Tests use real PostgreSQL: TEST_DATABASE_URL when set, else an embedded
// server that the jest global setup starts for the run.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const node = (script, args) =>
  spawnSync(process.execPath, [path.join(root, script), ...args], { cwd: root, stdio: 'inherit' }).status ?? 1;

process.stderr.write('[test] type-checking sources and tests\n');
if (node('node_modules/typescript/bin/tsc', ['-p', 'tsconfig.test.json']) !== 0) process.exit(1);
process.exit(node('node_modules/jest/bin/jest.js', process.argv.slice(2)));
