// The lab the benchmarks measure, deployed as in production: the hub and the gateway are separate processes
// (`hub/dist/main.js serve`, `gateway/dist/main.js`), the gateway drives a private real adb server, and the
// simulated Android devices (labsim) live in the benchmark process so it can plug and unplug them.
// Records: a scratch database on the PostgreSQL server DATABASE_URL names (created and dropped by the
// benchmark; the database in the URL is never touched), else the hub's embedded PostgreSQL in a temp dir.
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { LabWorld } = require(path.join(root, 'labsim/dist'));
const { dropDatabaseIfExists, quoteIdentifier, withDatabaseName, withServerClient } =
  require(path.join(root, 'hub/dist/store/database-admin.js'));

export const progress = (text) => process.stderr.write(`[bench] ${text}\n`);

/**
 * Starts database, hub, simulated lab and gateway. Returns the lab; `stop()` ends every process it started
 * and drops the scratch database. Ctrl-C while it runs stops the lab too.
 */
export async function startBenchLab({ gatewayName = 'bench-gateway' } = {}) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'devicelab-bench-'));
  // As root the embedded PostgreSQL runs as `postgres`, which must be able to traverse into the hub's data dir.
  chmodSync(dir, 0o711);
  const stops = [];
  let stopping;
  const stop = () => {
    stopping ??= (async () => {
      for (const step of stops.splice(0).reverse()) {
        try { await step(); } catch (err) { progress(`cleanup step failed: ${err?.message ?? err}`); }
      }
      rmSync(dir, { recursive: true, force: true });
    })();
    return stopping;
  };
  const onSignal = (signal) => {
    progress(`${signal}: stopping the lab`);
    void stop().then(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  stops.push(() => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  });

  try {
    const adminToken = randomUUID();
    const hubEnv = {
      ...process.env, DEVICELAB_PORT: '0', DEVICELAB_HOST: '127.0.0.1', DEVICELAB_LINK_PORT: '0',
      DEVICELAB_ADMIN_TOKEN: adminToken, DEVICELAB_DATA_DIR: path.join(dir, 'hub-data'),
      DEVICELAB_LOG_LEVEL: process.env.DEVICELAB_LOG_LEVEL || 'warn',
    };
    if (process.env.DATABASE_URL) {
      const serverUrl = process.env.DATABASE_URL;
      const name = `devicelab_bench_${process.pid}_${Date.now()}`;
      await withServerClient(serverUrl, (client) => client.query(`CREATE DATABASE ${quoteIdentifier(name)}`));
      stops.push(() => dropDatabaseIfExists(serverUrl, name));
      hubEnv.DATABASE_URL = withDatabaseName(serverUrl, name);
      progress(`records: scratch database ${name} on ${new URL(serverUrl).host}`);
    } else {
      delete hubEnv.DATABASE_URL;
      progress('records: embedded PostgreSQL (set DATABASE_URL to use a running server)');
    }

    progress('starting the hub process');
    const hub = spawnDaemon('hub', [path.join(root, 'hub/dist/main.js'), 'serve'], hubEnv);
    stops.push(() => hub.stop());
    const [, url, linkPort] = await hub.waitForLine(/DeviceLab hub: (\S+)\/apiv1 \(gateway link on port (\d+)\)/, 120_000);

    const register = spawnSync(process.execPath, [path.join(root, 'hub/dist/main.js'), 'gateway', 'add', gatewayName],
      { env: hubEnv, encoding: 'utf8' });
    if (register.status !== 0) throw new Error(`gateway add failed: ${register.stderr || register.stdout}`);
    const gatewayToken = register.stdout.trim().split('\n').pop();

    progress('starting the simulated lab (private adb server)');
    const world = new LabWorld({ stateDir: path.join(dir, 'labsim') });
    await world.start();
    stops.push(() => world.stop());

    progress('starting the gateway process');
    const gateway = spawnDaemon('gateway', [path.join(root, 'gateway/dist/main.js')], {
      ...process.env, DEVICELAB_GATEWAY_NAME: gatewayName, DEVICELAB_GATEWAY_TOKEN: gatewayToken,
      DEVICELAB_HUB: `127.0.0.1:${linkPort}`, DEVICELAB_GATEWAY_CACHE: path.join(dir, 'gateway-cache'),
      DEVICELAB_GATEWAY_PUBLIC_ADDRESS: '127.0.0.1', ANDROID_ADB_SERVER_PORT: String(world.adbServerPort),
      DEVICELAB_LOG_LEVEL: process.env.DEVICELAB_LOG_LEVEL || 'warn',
    });
    // Stopped before the world: the gateway must not outlive the adb server it talks to.
    stops.push(() => gateway.stop());

    const authorization = `Basic ${Buffer.from(`admin:${adminToken}`).toString('base64')}`;
    return {
      url, world, stop,
      /** GET `/apiv1<pathAndQuery>` as admin; resolves with the HTTP status and parsed body. */
      async get(pathAndQuery) {
        const res = await fetch(`${url}/apiv1${pathAndQuery}`, { headers: { authorization } });
        return { status: res.status, body: await res.json() };
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** A child process whose output is kept (shown when it fails) and scanned for a readiness line. */
function spawnDaemon(name, args, env) {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const waiters = new Set();
  const onData = (data) => {
    output += data.toString();
    for (const waiter of waiters) waiter();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return {
    waitForLine(pattern, timeoutMs) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => done(new Error(`${name}: no readiness line after ${timeoutMs} ms\n${output}`)), timeoutMs);
        const check = () => {
          const match = pattern.exec(output);
          if (match) done(undefined, match);
        };
        const done = (err, match) => {
          clearTimeout(timer);
          waiters.delete(check);
          if (err) reject(err); else resolve(match);
        };
        waiters.add(check);
        void exited.then(({ code, signal }) => done(new Error(`${name} exited (${code ?? signal}) before it was ready\n${output}`)));
        check();
      });
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}
