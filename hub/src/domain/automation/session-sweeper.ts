/**
 * The sweeper of automation sessions: sessions idle longer than their
 * `newCommandTimeout` are deleted on the gateway and their device released; sessions whose device was released by
 * someone else, deleted, unplugged or whose gateway went away are closed (deleted on the gateway when it is still
 * there); teardowns a dead replica left half done are finished. Time is the injected clock's.
 * With hub replicas, a session is swept by the replica whose link holds its device's gateway (only it can delete
 * the session on the device's Appium server before the device is released); sessions of devices no live replica
 * holds, by the lab's leader. Without `placeOf` (one hub), the leader sweeps every session.
 */
import type { AutomationContext } from './automation-sessions';
import { endAutomationSession, SESSION_DELETE_TIMEOUT_MS } from './automation-sessions';
import type { CommandTimes } from './command-times';
import { idleSessions, orphanedSessions, stuckClosings, whySessionEnded } from './session-map';
import { sql } from 'kysely';

export const SWEEP_INTERVAL_MS = 1_000;

/** Where a device's gateway is linked: this replica, another live one, or none. */
export type LinkPlace = (vendorUniqueIdentifier: string) => Promise<'here' | 'elsewhere' | 'nowhere'>;

export function startSessionSweeper(
  ctx: AutomationContext, times: CommandTimes, isLeader: () => Promise<boolean>, intervalMs = SWEEP_INTERVAL_MS,
  placeOf?: LinkPlace,
): () => Promise<void> {
  let running: Promise<void> | undefined;
  const sweep = async () => {
    await times.flush();
    const leader = await isLeader();
    if (!leader && !placeOf) return;
    const mine = async (session: { vendor_unique_identifier: string }) => {
      if (!placeOf) return leader;
      const place = await placeOf(session.vendor_unique_identifier);
      return place === 'here' || (place === 'nowhere' && leader);
    };
    const now = ctx.clock();
    for (const session of await idleSessions(ctx.db, now)) {
      if (!(await mine(session))) continue;
      const reason = `it had no command for ${session.new_command_timeout_s} s (newCommandTimeout)`;
      await endAutomationSession(ctx, session, reason, { deleteOnGateway: true });
    }
    for (const session of await orphanedSessions(ctx.db, now)) {
      if (!(await mine(session))) continue;
      const reason = whySessionEnded(session, now.getTime()) ?? 'its device is gone';
      await endAutomationSession(ctx, session, reason, { deleteOnGateway: session.device_availability === 'Online' });
    }
    const stuck = await stuckClosings(ctx.db, new Date(now.getTime() - 2 * SESSION_DELETE_TIMEOUT_MS));
    for (const session of stuck) {
      if (!(await mine(session))) continue;
      // Back to open so that one teardown runs it again (its replica died in the middle).
      await sql`UPDATE automation_sessions SET state = 'open' WHERE id = ${session.id} AND state = 'closing'`.execute(ctx.db);
      await endAutomationSession(ctx, { ...session, state: 'open' }, 'its teardown was interrupted', { deleteOnGateway: true });
    }
  };
  const timer = setInterval(() => {
    running ??= sweep().catch((err: unknown) => ctx.logger.warn({ err }, 'automation session sweep failed; retrying'))
      .finally(() => { running = undefined; });
  }, intervalMs);
  return async () => {
    clearInterval(timer);
    await running;
  };
}
