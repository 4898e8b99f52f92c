/**
 * Child process for the embedded-PostgreSQL tests (run with `node -r ./ts-register.cjs`): starts the embedded
 * server on the data dir in argv[2], prints one JSON line (`{"url","postmasterPid"}` or `{"error"}`), and stops
 * cleanly when it reads `stop` on stdin. Tests kill it with SIGKILL to orphan its postmaster.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { startEmbeddedPostgres } from '../../src/store/embedded-postgres';

async function main(): Promise<void> {
  const dataDir = process.argv[2];
  try {
    const server = await startEmbeddedPostgres({ dataDir });
    const pidFile = await fs.readFile(path.join(server.pgDataDir, 'postmaster.pid'), 'utf8');
    process.stdout.write(`${JSON.stringify({ url: server.url, postmasterPid: Number.parseInt(pidFile, 10) })}\n`);
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk: string) => {
      if (chunk.includes('stop')) void server.stop().then(() => process.exit(0));
    });
  } catch (err) {
    process.stdout.write(`${JSON.stringify({ error: err instanceof Error ? err.message : String(err) })}\n`);
    process.exit(1);
  }
}

void main();
