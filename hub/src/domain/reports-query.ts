/**
 * What every report is filtered by (spec 4.5): application, device, user, a date range and skip/take paging.
 * Dates arrive parsed (every request form of wire rule 7, docs/wire-rules.md); here they become the bounds queried.
 */
import { ApiFailure, EARLIEST_REQUEST_DATE, parseGuid, type ParsedRequestDate } from '@devicelab/shared';
import type { Db } from '../store/database';
import { resolveDevice } from './device-queries';

export interface ReportFilters {
  applicationId?: string;
  /** Device identifier: the service's Guid, serial number or vendor unique identifier. */
  device?: string;
  userId?: string;
  fromDate?: ParsedRequestDate;
  toDate?: ParsedRequestDate;
  /** Only events newer than this many days; replaces fromDate. */
  days?: number;
  skip?: number;
  take?: number;
}

/** Rows one report page returns at most, and when `take` is omitted. `count` always tells the full total. */
const MAX_REPORT_PAGE = 10_000;

interface DateRange {
  from?: Date;
  /** Upper bound; `toInclusive` false for a date-only toDate (then `to` is the start of the following day). */
  to?: Date;
  toInclusive: boolean;
}

export interface ResolvedReportQuery {
  applicationId?: string;
  deviceId?: string;
  userId?: string;
  range: DateRange;
  skip: number;
  take: number;
}

export function dateRange(filters: Pick<ReportFilters, 'fromDate' | 'toDate' | 'days'>, now: Date): DateRange {
  if (filters.days !== undefined && filters.days < 0) throw new ApiFailure(`Parameter 'days' must not be negative.`);
  const from = filters.days !== undefined
    ? new Date(now.getTime() - filters.days * 24 * 60 * 60 * 1000)
    : filters.fromDate?.date;
  // .NET's DateTime.AddDays fails below year 1 too; PostgreSQL would refuse the bound.
  if (from !== undefined && !(from.getTime() >= EARLIEST_REQUEST_DATE.getTime())) {
    throw new ApiFailure(`Parameter 'days' is out of range: ${filters.days} days before now is before the year 1.`);
  }
  let to: Date | undefined;
  let toInclusive = true;
  if (filters.toDate) {
    to = filters.toDate.date;
    if (filters.toDate.dateOnly) {
      // A date-only toDate includes that whole (server-local) day.
      // setDate on a copy, not `new Date(y, m, d + 1)`, which reads years 0-99 as 1900-1999.
      to = new Date(to);
      to.setDate(to.getDate() + 1);
      toInclusive = false;
    }
  }
  return { from, to, toInclusive };
}

/** Validates paging and resolves the device identifier; a non-Guid identifier nobody has is `Device '<x>' not found.`. */
export async function resolveReportQuery(db: Db, filters: ReportFilters, now: Date): Promise<ResolvedReportQuery> {
  for (const name of ['skip', 'take'] as const) {
    const value = filters[name];
    if (value !== undefined && value < 0) throw new ApiFailure(`Parameter '${name}' must not be negative.`);
  }
  let deviceId: string | undefined;
  if (filters.device !== undefined) {
    // A Guid filters as given, so events of devices whose rows are gone still report.
    deviceId = parseGuid(filters.device) ?? (await resolveDevice(db, filters.device)).id;
  }
  return {
    applicationId: filters.applicationId,
    deviceId,
    userId: filters.userId,
    range: dateRange(filters, now),
    skip: filters.skip ?? 0,
    take: Math.min(filters.take ?? MAX_REPORT_PAGE, MAX_REPORT_PAGE),
  };
}
