/**
 * Ctrl-C signals the terminal's whole foreground process group. The embedded PostgreSQL the hub starts is in
 * that group, so it would shut down at the same instant as the hub, while the hub is still recording its stop
 * (the next start then reports a restart after a crash). `serve` on the embedded default therefore runs itself
 * again in a process group of its own, and this process only passes the signals on.
 */
import { spawn } from 'node:child_process';

const MARKER = 'DEVICELAB_OWN_PROCESS_GROUP';

/** Resolves at once in the re-run child; otherwise runs this command again in its own group and never resolves. */
export async function inOwnProcessGroup(): Promise<void> {
  if (process.env[MARKER] === '1' || process.platform === 'win32') return;
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit', detached: true, env: { ...process.env, [MARKER]: '1' },
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal === 'SIGHUP' ? 'SIGTERM' : signal);
    });
  }
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
  return new Promise<void>(() => undefined);
}
