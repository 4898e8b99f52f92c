/**
 * Layering rules of the workspace, checked on the source text (the one place where reading source is the test):
 *  - domain, metrics and auth code know nothing of HTTP: no import from `hub/src/http/`;
 *  - configuration is read from the environment by one module per process (hub: `hub/src/config.ts`, gateway:
 *    `gateway/src/main.ts`, client CLI: `cli/src/config.ts`); everything else receives typed values;
 *  - the client CLI installs on its own: it imports Node's built-ins, commander and ws, never the hub or gateway.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)));
}

/** The module specifiers a file imports (static, dynamic and re-exports). */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(root, file), 'utf8');
  return [...text.matchAll(/(?:from|import|require)\s*\(?\s*['"]([^'"]+)['"]/g)].map((m) => m[1]);
}

test('domain, metrics and auth code does not import the HTTP layer', () => {
  const http = path.join('hub', 'src', 'http') + path.sep;
  const offending = ['hub/src/domain', 'hub/src/metrics', 'hub/src/auth'].flatMap(sourceFiles).flatMap((file) =>
    importsOf(file).filter((spec) => spec.startsWith('.'))
      .filter((spec) => (path.join(path.dirname(file), spec) + path.sep).startsWith(http))
      .map((spec) => `${file} imports ${spec}`));
  expect(offending).toEqual([]);
});

/** Where reading `process.env` is right, and why. */
const ENVIRONMENT_READERS = new Map([
  ['hub/src/config.ts', 'the hub\'s (and its CLI\'s) configuration'],
  ['gateway/src/main.ts', 'the gateway\'s configuration (optionsFromEnv)'],
  ['shared/src/logger.ts', 'the log level, needed before any configuration is read'],
  ['hub/src/cli/own-process-group.ts', 'the marker of its own re-executed child, not configuration'],
  ['gateway/src/automation/appium-child.ts', 'the Appium child sets its own environment from what the gateway hands it'],
  ['cli/src/config.ts', 'the client CLI\'s configuration (hub address, credentials, config file, colour, adb)'],
]);

test('only the configuration modules read process.env', () => {
  const readers = ['hub/src', 'gateway/src', 'shared/src', 'proto/src', 'cli/src'].flatMap(sourceFiles)
    .filter((file) => /process\.env\b/.test(readFileSync(path.join(root, file), 'utf8')))
    .map((file) => file.split(path.sep).join('/'));
  expect(readers.sort()).toEqual([...ENVIRONMENT_READERS.keys()].sort());
});

test('the client CLI imports only Node built-ins, commander, ws and its own modules', () => {
  const allowed = (spec: string) => spec.startsWith('node:') || spec.startsWith('.') || spec === 'commander' || spec === 'ws';
  const offending = sourceFiles('cli/src').flatMap((file) => importsOf(file).filter((spec) => !allowed(spec)).map((spec) => `${file} imports ${spec}`));
  expect(offending).toEqual([]);
});
