#!/usr/bin/env node
/** The `devicelab` binary. */
import { main } from './program';

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`devicelab: error: ${(err as Error).stack ?? String(err)}\nThis is a bug in devicelab; please report it.\n`);
    process.exit(1);
  },
);
