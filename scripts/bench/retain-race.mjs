#!/usr/bin/env node
// Load generator of the lab-scale benchmark's retain row, in its own process: every user of BENCH_RACE_USERS (a
// JSON file of `{ login, token }`) loops for BENCH_SECONDS: retain a random device of BENCH_RACE_DEVICES (a JSON
// file of ids), and when it wins, release it. Each user has its own keep-alive connection. Prints one JSON line:
// pairs, retain/release latencies (ms), losers, failures, and double retains: a retain that succeeded while this
// process knew another user still held the device (its release not even sent yet), which the hub must never allow.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { performance } from 'node:perf_hooks';

const [base, usersFile, devicesFile] = process.argv.slice(2);
const users = JSON.parse(readFileSync(usersFile, 'utf8'));
const devices = JSON.parse(readFileSync(devicesFile, 'utf8'));
const seconds = Number(process.env.BENCH_SECONDS || 5);
const url = new URL(base);

function post(agent, authorization, query) {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: url.hostname, port: url.port, method: 'POST', path: `${url.pathname}/Device?${query}`, agent,
      headers: { authorization, 'content-length': 0 },
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        try { resolve({ status: res.statusCode, body: JSON.parse(Buffer.concat(chunks).toString()) }); } catch (err) { reject(err); }
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const holders = new Map();
const retainMs = [];
const releaseMs = [];
/** The retains that lost (the device was held) and those that won, apart. */
const lostMs = [];
const wonMs = [];
let pairs = 0;
let lost = 0;
let failures = 0;
const failedStatuses = {};
let doubleRetains = 0;
const until = performance.now() + seconds * 1000;

async function user({ login, token }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const authorization = `Basic ${Buffer.from(`${login}:${token}`).toString('base64')}`;
  while (performance.now() < until) {
    const device = devices[Math.floor(Math.random() * devices.length)];
    const started = performance.now();
    const retained = await post(agent, authorization, `action=retain&id=${device}`);
    const took = performance.now() - started;
    retainMs.push(took);
    if (retained.status !== 200) { failures++; failedStatuses[retained.status] = (failedStatuses[retained.status] ?? 0) + 1; continue; }
    if (!retained.body.isSuccess) { lost++; lostMs.push(took); continue; }
    wonMs.push(took);
    if (holders.has(device) && holders.get(device) !== login) doubleRetains++;
    holders.set(device, login);
    // Held for a moment (at least one turn of the event loop), so other users' answers can arrive while it is.
    await new Promise((resolve) => setTimeout(resolve, 0));
    holders.delete(device);
    const releaseStarted = performance.now();
    const released = await post(agent, authorization, `action=release&id=${device}`);
    releaseMs.push(performance.now() - releaseStarted);
    if (released.status !== 200 || !released.body.isSuccess) failures++; else pairs++;
  }
  agent.destroy();
}

const started = performance.now();
await Promise.all(users.map(user));
const elapsed = (performance.now() - started) / 1000;
process.stdout.write(`${JSON.stringify({ elapsed, pairs, lost, failures, failedStatuses, doubleRetains, retainMs, releaseMs, lostMs, wonMs })}\n`);
