/**
 * Daily partitions of the metrics tables (UTC days): `metrics.<table>_pYYYYMMDD`, created when a day's first
 * row arrives (and ahead of time for today and tomorrow), dropped whole when retention passes them. Names
 * are built here from the table allow-list and a date, never from request text.
 */
import { sql } from 'kysely';
import { sqlStateOf, type Db } from '../store/database';
import { METRIC_TABLES, type MetricTableName } from './metrics-store';

const DAY_MS = 86_400_000;
const PARTITION = /^(usb_hub|log|health_check|sample)_p(\d{4})(\d{2})(\d{2})$/;
/** duplicate_table, and unique_violation on pg_type when two sessions create the same partition at once. */
const ALREADY_THERE = new Set(['42P07', '23505']);

/** The UTC day number (days since the epoch) of an epoch-microseconds time. */
export const dayOfMicros = (timeUs: number): number => Math.floor(timeUs / 1000 / DAY_MS);
export const dayOfDate = (date: Date): number => Math.floor(date.getTime() / DAY_MS);

function partitionName(table: MetricTableName, day: number): string {
  return `${table}_p${new Date(day * DAY_MS).toISOString().slice(0, 10).replace(/-/g, '')}`;
}

export class DailyPartitions {
  /** `<partition name>` of every partition known to exist. */
  private known: Set<string> | undefined;

  constructor(private readonly db: Db) {}

  /** Makes sure each (table, day) has its partition; `refresh` re-reads which exist first. */
  async ensure(needed: Iterable<[MetricTableName, number]>, refresh = false): Promise<void> {
    const known = await this.existing(refresh);
    for (const [table, day] of needed) {
      const name = partitionName(table, day);
      if (known.has(name)) continue;
      const from = new Date(day * DAY_MS).toISOString();
      const to = new Date((day + 1) * DAY_MS).toISOString();
      try {
        await sql`CREATE TABLE IF NOT EXISTS ${sql.id('metrics', name)} PARTITION OF ${sql.id('metrics', table)}
          FOR VALUES FROM (${sql.lit(from)}) TO (${sql.lit(to)})`.execute(this.db);
      } catch (err) {
        if (!ALREADY_THERE.has(sqlStateOf(err) ?? '')) throw err;
      }
      known.add(name);
    }
  }

  /** Drops every partition whose day ended more than `days` days before `now`'s day. */
  async dropOlderThan(days: number, now: Date): Promise<string[]> {
    const firstKept = dayOfDate(now) - days;
    const dropped: string[] = [];
    for (const name of await this.existing(true)) {
      const m = PARTITION.exec(name);
      if (!m) continue;
      const day = dayOfDate(new Date(Date.UTC(+m[2], +m[3] - 1, +m[4])));
      if (day >= firstKept) continue;
      await sql`DROP TABLE IF EXISTS ${sql.id('metrics', name)}`.execute(this.db);
      this.known?.delete(name);
      dropped.push(name);
    }
    return dropped;
  }

  private async existing(refresh = false): Promise<Set<string>> {
    if (this.known && !refresh) return this.known;
    const { rows } = await sql<{ name: string }>`
      SELECT child.relname AS name FROM pg_inherits
      JOIN pg_class parent ON parent.oid = pg_inherits.inhparent
      JOIN pg_class child ON child.oid = pg_inherits.inhrelid
      JOIN pg_namespace ns ON ns.oid = parent.relnamespace
      WHERE ns.nspname = 'metrics' AND parent.relname = ANY(${[...METRIC_TABLES]}::text[])`.execute(this.db);
    this.known = new Set(rows.map((r) => r.name));
    return this.known;
  }
}
