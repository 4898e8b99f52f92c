/** Runs `runCli` in a child process (`node -r ./ts-register.cjs cli-runner.ts <args>`), as the bin would. */
import { runCli } from '../../src/cli/devicelab';

runCli(process.argv.slice(2), {
  serve: () => Promise.reject(new Error('serve is not available in the test CLI runner')),
}).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  },
);
