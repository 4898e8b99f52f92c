// App binaries in PostgreSQL: store, read back, and serve to a gateway over the link's FetchBlob, against
// baselines from the same run: reading the same bytes from a local file, and the same bytes sent over the same
// gRPC FetchBlob service (same message size, same client) from a file. The gateway side runs in a child process
// (the real blobs channel of HubLink into the real AppCache, which hashes and writes the file); the hub side (real
// startLinkServer on a scratch database) runs here, so its RSS peak is this process's.
// Usage: node scripts/bench/blob-serve.mjs ["sizes in MB", default "50 200"]. Needs `npx tsc -b`. DATABASE_URL: the
// PostgreSQL server for the scratch database; BENCH_FILE_MESSAGE_BYTES: message size of the file baseline's FetchBlob.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { hub, progress, root, withScratchDatabase } from './metrics-scratch-database.mjs';

const require = createRequire(import.meta.url);
const fromPackage = (pkg, name) => createRequire(path.join(root, pkg, 'package.json'))(name);
const silent = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, fatal() {}, child() { return silent; } };
const MB = 1e6;

if (process.argv[2] === '--gateway') {
  await gatewayFetch(JSON.parse(process.argv[3]));
} else {
  await main();
}

/** Child: one cold-cache fetch through the gateway's own code; prints {ms, bytes}. */
async function gatewayFetch({ address, token, name, sha256, cacheDir }) {
  const { HubLink } = require(path.join(root, 'gateway', 'dist', 'link', 'hub-link.js'));
  const { AppCache } = require(path.join(root, 'gateway', 'dist', 'apps', 'app-cache.js'));
  const appCache = new AppCache(cacheDir);
  const link = new HubLink({
    name, token, hubAddress: address, publicAddress: '127.0.0.1', publicPort: 0, drivers: {}, appCache, logger: silent,
  });
  const started = process.hrtime.bigint();
  const file = await appCache.ensure(sha256, '.apk', () => link.channels.blobs.fetch(sha256));
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const { size } = await stat(file);
  await link.stop();
  process.stdout.write(JSON.stringify({ ms, bytes: size }));
}

async function runGateway(args) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--gateway', JSON.stringify(args)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`gateway fetch exited ${code}`);
  await rm(args.cacheDir, { recursive: true, force: true });
  return JSON.parse(out);
}

/** Samples this process's RSS while `fn` runs; returns its result, the seconds it took and the RSS peak. */
async function measured(fn) {
  let peak = process.memoryUsage.rss();
  const before = peak;
  const timer = setInterval(() => { peak = Math.max(peak, process.memoryUsage.rss()); }, 20);
  const started = process.hrtime.bigint();
  try {
    const result = await fn();
    return { result, seconds: result?.ms !== undefined ? result.ms / 1e3 : Number(process.hrtime.bigint() - started) / 1e9, rssGrowthMiB: (Math.max(peak, process.memoryUsage.rss()) - before) / 2 ** 20 };
  } finally {
    clearInterval(timer);
  }
}

/** The FetchBlob service answering from a file, cut like the hub cuts (the link's transport without PostgreSQL). */
async function startFileBlobServer(grpc, file, chunkBytes) {
  const { gatewayLinkService } = fromPackage('hub', '@devicelab/proto');
  const server = new grpc.Server();
  server.addService(gatewayLinkService, {
    FetchBlob: async (call) => {
      const { size } = await stat(file);
      let first = true;
      for await (const data of createReadStream(file, { highWaterMark: chunkBytes })) {
        if (call.cancelled) return;
        if (!call.write({ data, totalSize: first ? size : 0 })) await once(call, 'drain');
        first = false;
      }
      call.end();
    },
    Connect: (call) => call.end(), Tunnel: (call) => call.end(),
  });
  const port = await new Promise((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  return { port, stop: () => new Promise((resolve) => server.tryShutdown(resolve)) };
}

async function main() {
  const sizes = (process.argv[2] ?? process.env.BENCH_BLOB_MB ?? '50 200').split(/[\s,]+/).filter(Boolean).map(Number);
  const { BlobStore } = hub('apps/blob-store.js');
  const { startLinkServer } = hub('gateways/link-server.js');
  const { BLOB_CHUNK_BYTES } = hub('gateways/channels/blobs.js');
  const { registerGateway } = hub('gateways/gateway-tokens.js');
  const grpc = fromPackage('hub', '@grpc/grpc-js');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'blob-serve-'));
  const rows = [];
  try {
    await withScratchDatabase('blobserve', async (db) => {
      const blobs = new BlobStore(db);
      const link = await startLinkServer({ db, blobs, port: 0, host: '127.0.0.1', logger: silent });
      const token = await registerGateway(db, 'bench-gw');
      try {
        for (const mb of sizes) {
          const file = path.join(dir, `blob-${mb}`);
          progress(`writing ${mb} MB of random bytes`);
          const out = createWriteStream(file);
          for (let left = mb * MB; left > 0; left -= 4 * MB) if (!out.write(randomBytes(Math.min(left, 4 * MB)))) await once(out, 'drain');
          out.end();
          await once(out, 'finish');
          const bytes = mb * MB;
          const rate = (seconds) => bytes / MB / seconds;

          progress('baseline: reading the file');
          const fileRead = await measured(async () => { for await (const piece of createReadStream(file, { highWaterMark: 1 << 20 })) void piece; });
          progress('storing in PostgreSQL');
          const store = await measured(() => blobs.putFile(file));
          const blob = store.result;
          progress('reading back from PostgreSQL');
          const read = await measured(async () => { let n = 0; for await (const piece of blobs.read(blob)) n += piece.length; if (n !== bytes) throw new Error(`read ${n}`); });
          progress('baseline: FetchBlob from a file to the gateway');
          const fileServer = await startFileBlobServer(grpc, file, Number(process.env.BENCH_FILE_MESSAGE_BYTES ?? BLOB_CHUNK_BYTES));
          const fileServe = await measured(() => runGateway({ address: `127.0.0.1:${fileServer.port}`, token, name: 'bench-gw', sha256: blob.sha256, cacheDir: path.join(dir, 'cache-file') }));
          await fileServer.stop();
          progress('FetchBlob from PostgreSQL (the hub link) to the gateway');
          const serve = await measured(() => runGateway({ address: `127.0.0.1:${link.port}`, token, name: 'bench-gw', sha256: blob.sha256, cacheDir: path.join(dir, 'cache-hub') }));
          if (serve.result.bytes !== bytes || fileServe.result.bytes !== bytes) throw new Error('short fetch');
          const base = rate(fileRead.seconds);
          const baseServe = rate(fileServe.seconds);
          const row = (what, m, extra = {}) => rows.push({
            MB: mb, what, 'MB/s': rate(m.seconds).toFixed(1), 'x file read': (rate(m.seconds) / base).toFixed(3),
            'x FetchBlob from file': extra.vsServe ? (rate(m.seconds) / baseServe).toFixed(3) : '', 'hub RSS peak +MiB': m.rssGrowthMiB.toFixed(1),
          });
          row('file read (baseline)', fileRead);
          row('store (putFile)', store);
          row('read back (BlobStore.read)', read);
          row('FetchBlob from file (baseline 2)', fileServe, { vsServe: true });
          row('FetchBlob from PostgreSQL', serve, { vsServe: true });
          await rm(file, { force: true });
        }
      } finally {
        await link.stop();
      }
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  console.table(rows);
  console.log(`load average: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; chunk sent ${hub('gateways/channels/blobs.js').BLOB_CHUNK_BYTES} B`);
}
