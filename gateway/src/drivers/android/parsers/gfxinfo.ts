/**
 * `dumpsys gfxinfo <package>` -> the spec's Graphics fields (device-data.md 1.8). Rules that matter:
 *  - only the block `** Graphics info for pid N [<package>] **` (multi-process apps print one per process);
 *  - only the process-wide part before `Profile data in ms:` (Android 12+ repeats keys per window after it);
 *  - first occurrence of each key, exact labels anchored at line start (`Janky frames:` is not
 *    `Janky frames (legacy):`, `90th percentile:` is not `90th gpu percentile:`);
 *  - the cache table (`<name>  <current> / <total>`) exists only on the OpenGL pipeline (Android <= 8);
 *  - the total memory value sits on the line AFTER `Total memory usage:` / `Total GPU memory usage:`.
 * A package without a running process prints only the header: no fields at all.
 */
import { lines } from './text';

export function parseGfxinfo(text: string, packageId: string): Record<string, number> {
  const fields: Record<string, number> = {};
  const set = (name: string, value: number) => {
    if (Number.isFinite(value) && !(name in fields)) fields[name] = value;
  };
  let inBlock = false;
  let inCaches = false;
  let totalMemoryNext = false;
  for (const line of lines(text)) {
    const header = /^\*\* Graphics info for pid \d+ \[(.*)\] \*\*$/.exec(line.trim());
    if (header) {
      if (inBlock) break; // the next process's block
      inBlock = header[1] === packageId;
      continue;
    }
    if (!inBlock) continue;
    if (/^Profile data in ms:/.test(line) || /^View hierarchy:/.test(line)) break;
    if (totalMemoryNext) {
      totalMemoryNext = false;
      const bytes = /^\s*(\d+) bytes/.exec(line);
      if (bytes) set('Total graphics memory', Number(bytes[1]));
      continue;
    }
    if (/^Total (GPU )?memory usage:\s*$/.test(line)) {
      inCaches = false;
      totalMemoryNext = true;
      continue;
    }
    if (/^Caches:\s*$/.test(line)) {
      inCaches = true;
      continue;
    }
    let m: RegExpExecArray | null;
    if (inCaches && (m = /^\s+(\S.*?)\s+(\d+)\s*\/\s*(\d+)/.exec(line))) {
      set(`${m[1]} Current`, Number(m[2]));
      set(`${m[1]} Total`, Number(m[3]));
    } else if ((m = /^Total frames rendered: (\d+)\s*$/.exec(line))) {
      set('Total frames rendered', Number(m[1]));
    } else if ((m = /^Janky frames: (\d+) \(([\d.]+)%\)\s*$/.exec(line))) {
      set('Janky frames (count)', Number(m[1]));
      set('Janky frames (percent)', Number(m[2]));
    } else if ((m = /^(\d+th) percentile: (\d+)ms\s*$/.exec(line))) {
      set(`${m[1]} percentile`, Number(m[2]));
    } else if ((m = /^(Number [A-Za-z ]+): (\d+)\s*$/.exec(line))) {
      set(m[1], Number(m[2]));
    }
  }
  return fields;
}
