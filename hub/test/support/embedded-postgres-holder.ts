/**
 * Child process for the embedded-PostgreSQL tests (run with `node -r ./ts-register.cjs`): starts the embedded
 * server on the data dir in argv[2], prints one JSON line (`{"url","postmasterPid"}` or `{"error"}`), and stops
 * cleanly when it reads `stop` on stdin. Tests kill it with SIGKILL to orphan its postmaster. With
 * `--record-on-shutdown` it shuts down as the hub does on SIGINT/SIGTERM: an orderly stop (onShutdown) that
 * still writes a row to the server a moment later, then stops it. `--port=<n>` starts the server on that port.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../src/store/embedded-postgres';
import { onShutdown } from '../../src/shutdown';

async function main(): Promise<void> {
  const dataDir = process.argv[2];
  try {
    const portFlag = process.argv.find((arg) => arg.startsWith('--port='));
    const server = await startEmbeddedPostgres({ dataDir, port: portFlag ? Number(portFlag.slice(7)) : undefined });
    const pidFile = await fs.readFile(path.join(server.pgDataDir, 'postmaster.pid'), 'utf8');
    process.stdout.write(`${JSON.stringify({ url: server.url, postmasterPid: Number.parseInt(pidFile, 10) })}\n`);
    if (process.argv[3] === '--record-on-shutdown') {
      onShutdown(async () => {
        await new Promise((resolve) => setTimeout(resolve, 300));
        const client = new pg.Client({ connectionString: server.url });
        await client.connect();
        await client.query('CREATE TABLE IF NOT EXISTS shutdown_records (at timestamptz); INSERT INTO shutdown_records VALUES (now())');
        await client.end();
        await server.stop();
      });
    }
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
