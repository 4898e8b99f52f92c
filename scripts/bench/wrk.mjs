// wrk (C, multi-threaded), the load generator of the lab-scale rows: unlike a Node client it can saturate a bare
// Node server on this machine, so a ratio near 1 means "as fast as the baseline", not "as fast as the client".
import { spawn, spawnSync } from 'node:child_process';

/** Exits with how to install wrk when it is missing. */
export function requireWrk() {
  const found = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  if (found.error) {
    process.stderr.write('wrk is not installed: `apt-get install -y wrk` (Debian/Ubuntu), `brew install wrk` (macOS), '
      + 'or build it from https://github.com/wg/wrk\n');
    process.exit(2);
  }
}

const UNITS = { us: 0.001, ms: 1, s: 1000, m: 60_000 };
const ms = (text) => {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(text);
  return match ? Number(match[1]) * UNITS[match[2]] : NaN;
};

/**
 * Runs `wrk -t<threads> -c<connections> -d<seconds>s --latency` against `url` with `headers`; requests/s, p50 and
 * p99 (ms), and the answers that were not 2xx/3xx.
 */
export function wrk(url, { threads = 2, connections = 50, seconds = 5, headers = {} } = {}) {
  const args = [`-t${Math.min(threads, connections)}`, `-c${connections}`, `-d${seconds}s`, '--latency'];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`);
  args.push(url);
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    child.once('exit', (code) => {
      const rate = /Requests\/sec:\s+([\d.]+)/.exec(out);
      if (code !== 0 || !rate) return reject(new Error(`wrk exited ${code}: ${out}`));
      const percentile = (p) => ms(new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm').exec(out)?.[1] ?? '');
      const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
      resolve({
        rate: Number(rate[1]), p50: percentile(50), p99: percentile(99),
        non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
        errors: errors ? errors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
      });
    });
  });
}
