#!/usr/bin/env node
// The `devicelab` command. A committed file (the build output is not), so that the package manager links the bin
// at install time, before the first build of a checkout.
try {
  require.resolve('../dist/main.js');
} catch {
  process.stderr.write('devicelab: not built yet: run `npx tsc -b` (or `npm test`) in the DeviceLab checkout first.\n');
  process.exit(2);
}
require('../dist/main.js');
