#!/usr/bin/env node
/** `devicelab-hub` command line entry: `serve` runs the hub until SIGINT/SIGTERM; the rest are admin commands. */
import { createLogger } from '@devicelab/shared';
import { runCli } from './cli/devicelab';
import { inOwnProcessGroup } from './cli/own-process-group';
import { hubConfigFromEnv } from './config';
import { startHub } from './server';
import { onShutdown } from './shutdown';

async function serve(): Promise<void> {
  const config = hubConfigFromEnv();
  if (!config.databaseUrl) await inOwnProcessGroup();
  const logger = createLogger('hub');
  const hub = await startHub(config, logger);
  onShutdown(() => hub.stop());
  process.stdout.write(`DeviceLab hub: ${hub.url}/apiv1 (gateway link on port ${hub.linkPort})\n`);
  if (hub.adminToken && !config.adminToken) {
    process.stdout.write(`Built-in admin created. Login: admin  Token (shown once): ${hub.adminToken}\n`);
  }
  await new Promise<never>(() => undefined);
}

runCli(process.argv.slice(2), { serve }).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`devicelab-hub: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
