// Event-loop cost of hostile JSON bodies: each body is sent to `POST /Settings?update` of a real hub
// process, alone (the request's time is the hub's parse time plus a round trip) and then from two connections
// at once while a third measures `GET /Service` (how long a harmless request waits behind them).
import { progress, startBenchHub } from './bench-lab.mjs';
import { ms, printTable, summarize } from './statistics.mjs';

const MB = 1024 * 1024;
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const CONTENDED_MS = Number(process.env.BENCH_CONTENDED_MS || 4000);

/** ~1 MB bodies (the hub's text body limit). */
const BODIES = {
  'nested objects {"a":{"a":...}}': () => `${'{"a":'.repeat(Math.floor((MB - 16) / 6))}1${'}'.repeat(Math.floor((MB - 16) / 6))}`,
  'nested arrays [[[...]]]': () => `${'['.repeat(MB / 2 - 8)}${']'.repeat(MB / 2 - 8)}`,
  'unquoted keys {k1:1,...}': () => flat((i) => `k${i}:1`),
  'strict flat {"k1":1,...}': () => flat((i) => `"k${i}":1`),
  'one long string': () => `{"notes":"${'x'.repeat(MB - 32)}"}`,
  'small valid-looking {resetReboot:"x"}': () => '{resetReboot:"x"}',
};

function flat(entry) {
  const parts = [];
  let size = 2;
  for (let i = 0; size < MB - 32; i++) {
    const text = entry(i);
    parts.push(text);
    size += text.length + 1;
  }
  return `{${parts.join(',')}}`;
}

async function timed(fn) {
  const started = performance.now();
  const result = await fn();
  return { ms: performance.now() - started, result };
}

async function main() {
  const hub = await startBenchHub();
  try {
    const { authorization } = hub;
    const post = (body) => fetch(`${hub.url}/apiv1/Settings?update`, {
      method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body,
    }).then(async (res) => ({ status: res.status, text: await res.text() }));
    const service = () => fetch(`${hub.url}/apiv1/Service`, { headers: { authorization } }).then((res) => res.text());

    const rows = [];
    for (const [name, make] of Object.entries(BODIES)) {
      const body = make();
      progress(`${name}: ${body.length} bytes`);
      const alone = [];
      let answer;
      for (let i = 0; i < ROUNDS; i++) {
        const { ms: took, result } = await timed(() => post(body));
        alone.push(took);
        answer = result;
      }
      // Two hostile connections back to back, a third asks GET /Service every 50 ms meanwhile.
      const deadline = performance.now() + CONTENDED_MS;
      const hostile = async () => {
        const times = [];
        while (performance.now() < deadline) times.push((await timed(() => post(body))).ms);
        return times;
      };
      const waits = [];
      const probe = (async () => {
        while (performance.now() < deadline) {
          waits.push((await timed(service)).ms);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();
      const [a, b] = await Promise.all([hostile(), hostile(), probe]);
      const s = summarize(alone);
      const c = summarize([...a, ...b]);
      const w = summarize(waits);
      rows.push([name, answer.status, ms(s.median), ms(c.median), ms(c.max), ms(w.median), ms(w.max),
        answer.text.slice(0, 70)]);
    }
    printTable(['body (~1 MB)', 'HTTP', 'alone p50', '2 conns p50', '2 conns max', 'GET /Service p50', 'max', 'answer'], rows);
  } finally {
    await hub.stop();
  }
}

main().catch((err) => {
  progress(`failed: ${err?.stack ?? err}`);
  process.exit(1);
});
