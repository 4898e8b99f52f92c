/** How the reports read: durations in words a person uses, and availability as the periods it stayed the same. */

/** Seconds as "45 s", "12 min", "3 h 5 min", "2 d 4 h". */
export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  const days = Math.floor(hours / 24);
  return hours % 24 ? `${days} d ${hours % 24} h` : `${days} d`;
}

export interface AvailabilityPoint { date: string; online: number; inUse: number }
export interface AvailabilityPeriod { from: string; until?: string; online: number; inUse: number }

/**
 * The report's windows joined into the periods in which the counts stayed the same, newest first, leaving out the
 * periods with nothing online and nothing in use (a week of hourly windows is 168 rows, mostly alike).
 */
export function availabilityPeriods(points: AvailabilityPoint[]): AvailabilityPeriod[] {
  const periods: AvailabilityPeriod[] = [];
  points.forEach((p, i) => {
    const last = periods[periods.length - 1];
    if (last && last.online === p.online && last.inUse === p.inUse) last.until = points[i + 1]?.date;
    else periods.push({ from: p.date, until: points[i + 1]?.date, online: p.online, inUse: p.inUse });
  });
  return periods.filter((p) => p.online > 0 || p.inUse > 0).reverse();
}
