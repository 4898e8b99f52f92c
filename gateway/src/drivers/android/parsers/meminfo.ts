/**
 * `/proc/meminfo`: `Key:   <n> kB` lines (a few keys carry no unit). Values in bytes (kB x 1024). The key set
 * depends on kernel version and config (HighTotal/LowTotal only on 32-bit HIGHMEM kernels), so unknown keys
 * are kept and missing keys stay missing.
 */
import { lines } from './text';

export function parseMeminfo(text: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of lines(text)) {
    const m = /^([^:]+):\s+(\d+)(\s+kB)?\s*$/.exec(line);
    if (!m || values.has(m[1])) continue;
    values.set(m[1], Number(m[2]) * (m[3] ? 1024 : 1));
  }
  return values;
}
