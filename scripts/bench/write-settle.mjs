#!/usr/bin/env node
// What kept reads cost writes: a write through a replica answers DEVICELAB_KEPT_READS_LAG_MS (default 50) after its
// commit while another replica is live, so that any read that starts after the answer, on any replica, sees it.
// Measures sequential `POST /Device?verb=update` through replica A (one client): A alone, A with replica B live,
// A alone again (B stopped), and GET /Device through B right after each write (it must show the write).
// BENCH_WRITES (200) per phase. Usage: DATABASE_URL=postgres://... node scripts/bench/write-settle.mjs
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { progress, sleep, spawnDaemon, startBenchHub } from './bench-lab.mjs';
import { percentile, printTable } from './statistics.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const writes = Number(process.env.BENCH_WRITES || 200);
// pg is the hub's dependency (hoisted nowhere): taken from there.
const pg = createRequire(path.join(root, 'hub', 'package.json'))('pg');

const a = await startBenchHub({ gatewayName: 'write-settle' });
const rows = [];
try {
  const db = new pg.Client({ connectionString: a.env.DATABASE_URL });
  await db.connect();
  const { rows: [device] } = await db.query(`INSERT INTO devices (vendor_unique_identifier, serial_number, name, operating_system,
    availability, readiness) VALUES ('SETTLE1', 'SETTLE1', 'Settle', 'Android', 'Online', 'Ready') RETURNING id`);
  await db.end();
  const write = async (hubUrl, notes) => {
    const started = performance.now();
    const res = await fetch(`${hubUrl}/apiv1/Device?verb=update&id=${device.id}`, {
      method: 'POST', body: JSON.stringify({ notes }), headers: { authorization: a.authorization, 'content-type': 'application/json' },
    });
    if (res.status !== 200) throw new Error(`write answered ${res.status}`);
    await res.arrayBuffer();
    return performance.now() - started;
  };
  const notesOn = async (hubUrl) => {
    const res = await fetch(`${hubUrl}/apiv1/Device`, { headers: { authorization: a.authorization } });
    return (await res.json()).find((d) => d.id === device.id)?.notes;
  };
  const phase = async (label, readerUrl) => {
    const times = [];
    let stale = 0;
    for (let i = 0; i < writes; i++) {
      const notes = `${label} ${i}`;
      times.push(await write(a.url, notes));
      if (readerUrl && (await notesOn(readerUrl)) !== notes) stale++;
    }
    times.sort((x, y) => x - y);
    rows.push([label, `p50 ${percentile(times, 50).toFixed(1)} ms, p90 ${percentile(times, 90).toFixed(1)} ms`,
      readerUrl ? `${stale} of ${writes}` : '-']);
    progress(`${label}: done`);
  };
  await sleep(1500);
  await phase('A alone', undefined);
  const b = spawnDaemon('hub-b', [a.hubMain, 'serve'], { ...a.env, DEVICELAB_DATA_DIR: path.join(a.dir, 'hub-b-data') });
  a.onStop(() => b.stop()); // a run that fails while B lives must not leave it running
  const [, bUrl] = await b.waitForLine(/DeviceLab hub: (\S+)\/apiv1 \(gateway link on port (\d+)\)/, 120_000);
  await sleep(1500); // A hears of B (every 100 ms), B's proof matures (0.7 s)
  await phase('A with B live', bUrl);
  await b.stop();
  await sleep(1500);
  await phase('A alone again', undefined);
  printTable(['write through A (1 client)', 'latency', 'stale reads on B right after'], rows);
} finally {
  await a.stop();
}
