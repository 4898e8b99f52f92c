/**
 * `pm install` / `pm uninstall` / streamed install replies: success is a line EXACTLY `Success` (newer adb
 * prints `Success: streamed N bytes` before a `Failure [...]`); failure is `Failure [CODE(: message)?]`.
 */
import { lines } from './text';

type PmResult = { ok: true } | { ok: false; message: string; code?: string };

export function parsePmResult(text: string): PmResult {
  const all = lines(text).map((l) => l.trim());
  for (const line of all) {
    const m = /Failure \[([^\]:]+)(?::\s*(.*))?\]/.exec(line);
    if (m) return { ok: false, message: m[0], code: m[1].trim() };
  }
  if (all.includes('Success')) return { ok: true };
  const other = all.filter((l) => l !== '');
  return { ok: false, message: other.length > 0 ? other.join('\n') : 'No output from the package manager' };
}
