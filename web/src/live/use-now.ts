import { useEffect, useState } from 'preact/hooks';

/** The current time, moved on every `everyMs` (a calendar's "now" line, a lease's countdown). */
export function useNow(everyMs: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}
