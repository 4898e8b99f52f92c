/**
 * Last-command times of the relayed sessions, written in batches: a command costs a map entry, and one UPDATE per
 * interval writes every session that had commands (the idle limit is counted in seconds, so a write every
 * FLUSH_INTERVAL_MS keeps it true enough without a statement per command).
 */
import { sql } from 'kysely';
import type { Logger } from '@devicelab/shared';
import type { Db } from '../../store/database';

export const FLUSH_INTERVAL_MS = 500;

export class CommandTimes {
  private pending = new Map<string, Date>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> | undefined;

  constructor(private readonly db: Db, private readonly logger: Logger, intervalMs = FLUSH_INTERVAL_MS) {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  /** A command of the session (its map row id) at `at`. */
  touch(rowId: string, at: Date): void {
    this.pending.set(rowId, at);
  }

  /** Writes what is pending now (also what the sweeper calls before it judges idleness). */
  async flush(): Promise<void> {
    await this.flushing;
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const ids = [...batch.keys()];
    const times = [...batch.values()].map((at) => at.toISOString());
    this.flushing = sql`UPDATE automation_sessions s SET last_command_at = t.at
      FROM unnest(${ids}::uuid[], ${times}::timestamptz[]) AS t(id, at)
      WHERE s.id = t.id AND s.state = 'open' AND s.last_command_at < t.at`.execute(this.db).then(() => undefined, (err: unknown) => {
      this.logger.warn({ err }, 'could not write automation command times; keeping them for the next write');
      for (const [id, at] of batch) if (!this.pending.has(id)) this.pending.set(id, at);
    }).finally(() => { this.flushing = undefined; });
    await this.flushing;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
