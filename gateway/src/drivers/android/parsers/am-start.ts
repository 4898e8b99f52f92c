/**
 * `am start [-W] -n <component> ...`: success is decided from text. `Error:` lines (and `Error type N`) or an
 * exception mean failure; `Status: ok` (possibly with a `Warning:` when the task was brought to the front) is
 * success; without -W there is no status line, so the absence of errors is success.
 */
import { lines } from './text';

interface AmStartResult {
  ok: boolean;
  error?: string;
  status?: string;
  launchState?: string;
  totalTimeMs?: number;
  warning?: string;
}

export function parseAmStart(text: string): AmStartResult {
  const all = lines(text).map((l) => l.trim());
  const errors = all.filter((l) => /^Error:/.test(l)).map((l) => l.replace(/^Error:\s*/, ''));
  const exception = all.find((l) => /^(Exception occurred|java\.lang\.\w+Exception|Security exception)/.test(l));
  const value = (key: string) => {
    const line = all.find((l) => l.startsWith(`${key}:`));
    return line === undefined ? undefined : line.slice(key.length + 1).trim();
  };
  const status = value('Status');
  const total = value('TotalTime');
  const result: AmStartResult = { ok: errors.length === 0 && exception === undefined };
  if (!result.ok) result.error = errors[0] ?? exception;
  if (status !== undefined) result.status = status;
  const launchState = value('LaunchState');
  if (launchState !== undefined) result.launchState = launchState;
  if (total !== undefined && /^\d+$/.test(total)) result.totalTimeMs = Number(total);
  const warning = value('Warning');
  if (warning !== undefined) result.warning = warning;
  if (result.ok && status !== undefined && status !== 'ok' && status !== 'timeout') {
    result.ok = false;
    result.error = `Launch status: ${status}`;
  }
  return result;
}
