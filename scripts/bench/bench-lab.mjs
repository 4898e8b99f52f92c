// The lab the benchmarks measure, deployed as in production: the hub and the gateway are separate processes
// (`hub/dist/main.js serve`, `gateway/dist/main.js`), the gateway drives a private real adb server, and the
// simulated Android devices (labsim) live in the benchmark process so it can plug and unplug them.
// Records: a scratch database on the PostgreSQL server DATABASE_URL names (created and dropped by the
// benchmark; the database in the URL is never touched), else the hub's embedded PostgreSQL in a temp dir.
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { LabWorld } = require(path.join(root, 'labsim/dist'));
const { dropDatabaseIfExists, quoteIdentifier, withDatabaseName, withServerClient } =
  require(path.join(root, 'hub/dist/store/database-admin.js'));

export const progress = (text) => process.stderr.write(`[bench] ${text}\n`);
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A TCP port on 127.0.0.1 that nothing listens on now. */
export const freePort = () => new Promise((resolve) => {
  const server = net.createServer().listen(0, '127.0.0.1', () => {
    const { port } = server.address();
    server.close(() => resolve(port));
  });
});
const logLevel = () => process.env.DEVICELAB_LOG_LEVEL || 'warn';

let clockTicks;
/** CPU time (user + system, ms) process `pid` has used so far, from /proc/<pid>/stat. */
export function cpuMs(pid) {
  // /proc counts in clock ticks (USER_HZ, 100 on most Linux builds): asked of the system once.
  clockTicks ??= Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The fields are counted after the command name, which is in parentheses and may itself hold spaces or ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks; // utime, stime (fields 14 and 15)
}

/**
 * Starts the database and the hub process with one registered gateway. `stop()` ends everything started
 * through the returned hub (also what `onStop` adds, last added first) and drops the scratch database; Ctrl-C
 * while it runs stops it too.
 */
export async function startBenchHub({ gatewayName = 'bench-gateway' } = {}) {
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
      DEVICELAB_ADMIN_TOKEN: adminToken, DEVICELAB_DATA_DIR: path.join(dir, 'hub-data'), DEVICELAB_LOG_LEVEL: logLevel(),
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
    // BENCH_HUB_NODE_ARGS: node flags for the hub process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it.
    const hubNodeArgs = (process.env.BENCH_HUB_NODE_ARGS || '').split(' ').filter(Boolean);
    // BENCH_HUB_MAIN: another build of the hub (e.g. of an earlier commit) to measure instead of hub/dist.
    const hubMain = process.env.BENCH_HUB_MAIN || path.join(root, 'hub/dist/main.js');
    const hub = spawnDaemon('hub', [...hubNodeArgs, hubMain, 'serve'], hubEnv);
    stops.push(() => hub.stop());
    const [, url, linkPort] = await hub.waitForLine(/DeviceLab hub: (\S+)\/apiv1 \(gateway link on port (\d+)\)/, 120_000);

    const register = spawnSync(process.execPath, [hubMain, 'gateway', 'add', gatewayName],
      { env: hubEnv, encoding: 'utf8' });
    if (register.status !== 0) throw new Error(`gateway add failed: ${register.stderr || register.stdout}`);
    const gatewayToken = register.stdout.trim().split('\n').pop();

    const authorization = `Basic ${Buffer.from(`admin:${adminToken}`).toString('base64')}`;
    return {
      url, dir, stop, authorization, adminToken, linkPort, gatewayName, gatewayToken,
      /** The hub's environment (its DATABASE_URL), for starting a second replica on the same records. */
      env: hubEnv,
      /** The hub process's id (for its memory in /proc). */
      hubPid: hub.pid,
      /** The hub build started (hub/dist/main.js or BENCH_HUB_MAIN): a second replica runs the same one. */
      hubMain,
      onStop: (step) => stops.push(step),
      /** GET (or `init.method`, with `init.headers`) `/apiv1<pathAndQuery>` as admin; resolves with the HTTP status and the body (parsed when JSON). */
      async get(pathAndQuery, init = {}) {
        const request = () => fetch(`${url}/apiv1${pathAndQuery}`, { ...init, headers: { ...init.headers, authorization } });
        // A keep-alive connection the hub closes just as it is reused fails without having been processed: a
        // read is tried once more; a hub that is gone shows its output.
        const res = await request().catch((err) => {
          if (hub.exited) throw new Error(`the hub process exited:\n${hub.output.slice(-4000)}`);
          if ((init.method ?? 'GET') !== 'GET') throw err;
          return request();
        });
        const text = await res.text();
        try { return { status: res.status, body: JSON.parse(text) }; } catch { return { status: res.status, body: text }; }
      },
      /** A gateway process for this hub, driving `world`'s adb server; `env` adds settings, `nodeArgs` node flags. */
      startGateway(world, { env = {}, nodeArgs = [] } = {}) {
        return spawnDaemon('gateway', [...nodeArgs, path.join(root, 'gateway/dist/main.js')], {
          ...process.env, ...world.env(),
          DEVICELAB_GATEWAY_NAME: gatewayName, DEVICELAB_GATEWAY_TOKEN: gatewayToken, DEVICELAB_HUB: `127.0.0.1:${linkPort}`,
          DEVICELAB_GATEWAY_CACHE: path.join(dir, 'gateway-cache'), DEVICELAB_GATEWAY_PUBLIC_ADDRESS: '127.0.0.1',
          DEVICELAB_LOG_LEVEL: logLevel(), ...env,
        });
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The hub, a simulated lab (no devices yet) and one gateway process; `stop()` ends them all. */
export async function startBenchLab(options = {}) {
  const hub = await startBenchHub(options);
  try {
    progress('starting the simulated lab (private adb server)');
    const world = new LabWorld({ stateDir: path.join(hub.dir, 'labsim') });
    await world.start();
    hub.onStop(() => world.stop());
    progress('starting the gateway process');
    const gateway = hub.startGateway(world, { nodeArgs: (process.env.BENCH_GATEWAY_NODE_ARGS || '').split(' ').filter(Boolean) });
    // Stopped before the world: the gateway must not outlive the adb server it talks to.
    hub.onStop(() => gateway.stop());
    // Measuring starts once the gateway's link is up, or the first sample would include the gateway's start.
    await waitForGatewayLink(hub);
    return { url: hub.url, world, stop: hub.stop, get: hub.get, gatewayPid: gateway.pid, hub, authorization: hub.authorization };
  } catch (err) {
    await hub.stop();
    throw err;
  }
}

/** Waits until GET /Gateway lists a connected gateway (a registered one is listed, isConnected false, before its link is up). */
export async function waitForGatewayLink(hub, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { status, body } = await hub.get('/Gateway');
    if (status === 200 && Array.isArray(body) && body.some((gateway) => gateway.isConnected === true)) return;
    if (Date.now() > deadline) throw new Error(`no gateway connected to the hub after ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** A child process whose output is kept (shown when it fails) and scanned for a readiness line. */
export function spawnDaemon(name, args, env) {
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
    pid: child.pid,
    get exited() { return child.exitCode !== null || child.signalCode !== null; },
    get output() { return output; },
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
