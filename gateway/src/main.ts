/**
 * Gateway daemon. Environment:
 *   DEVICELAB_GATEWAY_NAME      gateway name as registered at the hub (required)
 *   DEVICELAB_GATEWAY_TOKEN     gateway token (required)
 *   DEVICELAB_HUB               hub link address host:port (required)
 *   DEVICELAB_GATEWAY_CACHE     app cache directory (default ./gateway-cache)
 *   DEVICELAB_GATEWAY_PUBLIC_ADDRESS / DEVICELAB_GATEWAY_PUBLIC_PORT
 *                               where clients reach this gateway's device services (default hostname / 0)
 *   DEVICELAB_HUB_CA, DEVICELAB_GATEWAY_CERT, DEVICELAB_GATEWAY_KEY
 *                               PEM files; DEVICELAB_HUB_CA (or DEVICELAB_HUB_TLS=1 for system roots) turns TLS on
 *   DEVICELAB_HUB_TLS_NAME      name to verify in the hub certificate when it differs from the DEVICELAB_HUB host
 *   ANDROID_ADB_SERVER_PORT     adb server port (default 5037); DEVICELAB_ADB_BIN adb binary (default `adb`)
 *   DEVICELAB_LOG_LEVEL         pino level (default warn)
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { createLogger } from '@devicelab/shared';
import { startGateway, type GatewayOptions } from './gateway';
import type { HubLinkTls } from './link/hub-link';

export function optionsFromEnv(env: NodeJS.ProcessEnv = process.env): GatewayOptions {
  const required = (key: string) => {
    const value = env[key]?.trim();
    if (!value) throw new Error(`${key} is required`);
    return value;
  };
  const file = (key: string) => (env[key] ? readFileSync(env[key] as string) : undefined);
  const ca = file('DEVICELAB_HUB_CA');
  const cert = file('DEVICELAB_GATEWAY_CERT');
  const key = file('DEVICELAB_GATEWAY_KEY');
  const serverName = env.DEVICELAB_HUB_TLS_NAME || undefined;
  const tls: HubLinkTls | undefined = ca || cert || serverName || env.DEVICELAB_HUB_TLS === '1'
    ? { ca, cert, key, serverName }
    : undefined;
  const adbPort = env.ANDROID_ADB_SERVER_PORT ? Number(env.ANDROID_ADB_SERVER_PORT) : undefined;
  return {
    name: required('DEVICELAB_GATEWAY_NAME'),
    token: required('DEVICELAB_GATEWAY_TOKEN'),
    hubAddress: required('DEVICELAB_HUB'),
    cacheDir: env.DEVICELAB_GATEWAY_CACHE || './gateway-cache',
    adbPort: Number.isInteger(adbPort) ? adbPort : undefined,
    adbBin: env.DEVICELAB_ADB_BIN || undefined,
    publicAddress: env.DEVICELAB_GATEWAY_PUBLIC_ADDRESS || os.hostname(),
    publicPort: Number(env.DEVICELAB_GATEWAY_PUBLIC_PORT ?? 0) || 0,
    tls,
  };
}

async function main(): Promise<void> {
  const logger = createLogger('gateway', process.env.DEVICELAB_LOG_LEVEL ?? 'info');
  const options = optionsFromEnv();
  const gateway = await startGateway({ ...options, logger });
  logger.info({ name: options.name, hub: options.hubAddress }, 'gateway started');
  const shutdown = (signal: string) => {
    logger.info({ signal }, 'stopping gateway');
    gateway.stop().then(() => process.exit(0), (err) => {
      logger.error({ err: String(err) }, 'clean stop failed');
      process.exit(1);
    });
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`devicelab gateway: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
