/**
 * `cmd package resolve-activity --brief ...`: the component is the LAST non-empty line and must contain `/`;
 * no launcher activity prints `No activity found`.
 */
import { lines } from './text';

export function parseResolvedActivity(text: string): string | undefined {
  const nonEmpty = lines(text).map((l) => l.trim()).filter((l) => l !== '');
  const last = nonEmpty[nonEmpty.length - 1];
  if (!last || !last.includes('/') || /\s/.test(last)) return undefined;
  return last;
}
