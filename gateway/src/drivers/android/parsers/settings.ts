/** `settings get ...` / single-value reads: trimmed first line; the literal `null` (unset) and errors are undefined. */
import { lines } from './text';

export function parseSingleValue(text: string): string | undefined {
  const first = lines(text).map((l) => l.trim()).find((l) => l !== '');
  if (first === undefined || first === 'null') return undefined;
  // Error texts of the shell (`cat: ...: No such file or directory`, `/system/bin/sh: settings: not found`).
  if (/No such file|not found|Permission denied|Exception|^Error/i.test(first)) return undefined;
  return first;
}
