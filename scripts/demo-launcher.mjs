#!/usr/bin/env node
// `npm run demo` entry: runs scripts/demo.mjs in a process group of its own. Ctrl-C signals the terminal's whole
// foreground group; the embedded PostgreSQL the demo starts would get that SIGINT too and shut down while the hub
// is still recording its stop. This process takes the terminal's signals and passes them to the demo alone, which
// then stops everything in order (gateway, simulators, adb server, hub, PostgreSQL).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const demo = spawn(process.execPath, [path.join(path.dirname(fileURLToPath(import.meta.url)), 'demo.mjs')], {
  stdio: 'inherit',
  detached: true,
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (demo.exitCode === null && demo.signalCode === null) demo.kill(signal === 'SIGHUP' ? 'SIGTERM' : signal);
  });
}
demo.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
