#!/usr/bin/env node
/** The `devicelab` binary. */
import { main } from './program';

// A reader that went away (a closed terminal, `| head`) must not end devicelab before it released its devices.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`devicelab: error: ${(err as Error).stack ?? String(err)}\nThis is a bug in devicelab; please report it.\n`);
    process.exit(1);
  },
);
