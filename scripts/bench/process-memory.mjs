// Resident memory of processes as /proc shows it (Linux), for the memory figures of the benchmarks.
import { readdirSync, readFileSync } from 'node:fs';

/** VmRSS of one process in bytes (0 when it is gone). */
export function rssOf(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Every live process: pid, parent pid and command line. */
function processes() {
  const out = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim();
      out.push({ pid: Number(name), ppid, cmdline });
    } catch { /* gone meanwhile */ }
  }
  return out;
}

/** The process and all its descendants, with RSS, leaving out the subtrees of `exclude` (pids). */
export function treeOf(rootPid, exclude = []) {
  const all = processes();
  const tree = [];
  const wanted = new Set([rootPid]);
  const skipped = new Set(exclude);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of all) {
      if (wanted.has(p.pid) || skipped.has(p.pid)) continue;
      if (skipped.has(p.ppid)) { skipped.add(p.pid); grew = true; } else if (wanted.has(p.ppid)) { wanted.add(p.pid); grew = true; }
    }
  }
  for (const p of all) if (wanted.has(p.pid)) tree.push({ ...p, rss: rssOf(p.pid) });
  return tree;
}

/** The adb server listening on `port` (it daemonises, so it is nobody's child). */
export function adbServerPid(port) {
  return processes().find((p) => /\badb\b/.test(p.cmdline) && p.cmdline.includes('fork-server') && p.cmdline.includes(`tcp:${port}`))?.pid;
}

export const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
