/**
 * The fake `xcrun` process: `xcrun simctl [--set <path>] <subcommand> …` against the simulator set kept in
 * `$LABSIM_XCRUN_STATE` (a directory). Started through `labsim/bin/xcrun` or a wrapper from `createFakeXcrun`.
 */
import { runSimctl } from './simctl';
import { SimStateStore } from './state';

async function main(argv: string[]): Promise<number> {
  const dir = process.env.LABSIM_XCRUN_STATE;
  if (!dir) {
    process.stderr.write('xcrun (labsim): set LABSIM_XCRUN_STATE to the directory of the simulated simulator set\n');
    return 72;
  }
  const [tool, ...rest] = argv;
  if (tool !== 'simctl') {
    process.stderr.write(`xcrun: error: unable to find utility "${tool ?? ''}", not a developer tool or in PATH\n`);
    return 72;
  }
  const args = rest[0] === '--set' ? rest.slice(2) : rest;
  return runSimctl(new SimStateStore(dir), args, {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
  });
}

process.on('SIGTERM', () => process.exit(0));
main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
}, (err: unknown) => {
  process.stderr.write(`xcrun (labsim) failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
