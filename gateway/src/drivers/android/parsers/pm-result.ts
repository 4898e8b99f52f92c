/**
 * `pm install` / `pm uninstall` / streamed install replies: success is a line EXACTLY `Success` (newer adb
 * prints `Success: streamed N bytes` before a `Failure [...]`); failure is `Failure [CODE(: message)?]`. The code
 * is pm's own when it is one (`INSTALL_FAILED_...`); pm also prints reasons that are not (`not installed for 0`),
 * and those fail as PM_REFUSED.
 */
import { isFailureCode, type FailureCode } from '@devicelab/shared';
import { lines } from './text';

type PmResult = { ok: true } | { ok: false; message: string; code: FailureCode };

export function parsePmResult(text: string): PmResult {
  const all = lines(text).map((l) => l.trim());
  for (const line of all) {
    const m = /Failure \[([^\]:]+)(?::\s*(.*))?\]/.exec(line);
    if (m) {
      const code = m[1].trim();
      return { ok: false, message: m[0], code: isFailureCode(code) ? code : 'PM_REFUSED' };
    }
  }
  if (all.includes('Success')) return { ok: true };
  const other = all.filter((l) => l !== '');
  return { ok: false, message: other.length > 0 ? other.join('\n') : 'No output from the package manager', code: 'PM_REFUSED' };
}
